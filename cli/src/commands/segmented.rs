//! `segmented` and `batched`: scans of every segment of a file's values or generated ones (segments
//! from head flags, start offsets, runs of equal keys or rows of a fixed length) and of every row
//! or column of a row-major matrix, checked per segment against the CPU.

use crate::args::{
    host_len, positive, types_of, AxisArg, BatchedKernelArg, BatchedOp, BatchedType, Files, Global, KeyType,
    OffsetType, Runs, SegmentedKernelArg, SegmentedOp, SegmentedType, OFFSET_TYPES,
};
use crate::experiment::{self, first_difference, Check, Experiment, Needs};
use crate::io;
use crate::memory::{self, bytes_of, total};
use clap::Args;
use gpu_scan::cudarc::driver::CudaSlice;
use gpu_scan::plan::batched::BatchedRequest;
use gpu_scan::plan::segmented::Marks;
use gpu_scan::reference::apps as reference;
use gpu_scan::{
    input, with_elem_type, Axis, BatchedOptions, ElemType, Element, Error, Gpu, Key, Matrix, Op, Result,
    SegmentedOptions, TempStorage,
};
use rayon::prelude::*;
use scan_abi::Family;
use std::path::{Path, PathBuf};

#[derive(Args)]
pub struct SegmentedArgs {
    /// Number of elements (100000000, 1e8, 2^28; optional with --input).
    #[arg(value_parser = positive)]
    n: Option<u64>,
    /// Element type (default u32; a .npy input brings its own).
    #[arg(long = "type", value_name = "TYPE")]
    ty: Option<SegmentedType>,
    /// The operator combining the elements of a segment.
    #[arg(long, default_value = "add")]
    op: SegmentedOp,
    /// Exclusive scans (a segment's first element gets the identity).
    #[arg(long)]
    exclusive: bool,
    /// With --input: head flags as long as the input (u8, or a NumPy bool array), a segment
    /// starting at every non-zero one (and at 0).
    #[arg(long, value_name = "FILE", requires = "input", conflicts_with_all = ["offsets", "keys", "rows_of"])]
    heads: Option<PathBuf>,
    /// Segments from their start offsets (made into head flags on the GPU): a FILE of
    /// non-decreasing integers from 0 to N (CSR row offsets as they are; with --input), or
    /// without one, random offsets --mean-length apart on average.
    #[arg(long, value_name = "FILE", num_args = 0..=1, conflicts_with_all = ["keys", "rows_of"])]
    offsets: Option<Option<PathBuf>>,
    /// The type of a raw --offsets file (a .npy file brings its own, which must agree).
    #[arg(long, value_name = "TYPE")]
    offset_type: Option<OffsetType>,
    /// Scan by key, a segment starting wherever the key changes: a FILE of integer keys as long
    /// as the input (with --input), or without one, random runs of --mean-length of --key-type.
    #[arg(long, value_name = "FILE", num_args = 0..=1, conflicts_with = "rows_of")]
    keys: Option<Option<PathBuf>>,
    /// The type of the --keys: generated ones (default u32), or a raw keys file's (a .npy file
    /// brings its own, which must agree).
    #[arg(long, value_name = "TYPE")]
    key_type: Option<KeyType>,
    /// Mean segment length of the generated heads, offsets or keys (at least 1).
    #[arg(long, default_value_t = 1000, value_parser = positive)]
    mean_length: u64,
    /// Fixed segments of this many elements instead (N must be a multiple): the rows of a matrix.
    #[arg(long, value_parser = positive)]
    rows_of: Option<u64>,
    /// The kernel (auto picks by size and how the segments are given).
    #[arg(long, default_value = "auto")]
    kernel: SegmentedKernelArg,
    /// --input: the values; --output: their segmented scan.
    #[command(flatten)]
    files: Files,
    #[command(flatten)]
    runs: Runs,
}

#[derive(Args)]
pub struct BatchedArgs {
    /// Rows of the matrix (at least 1; optional with --input, whose shape gives it).
    #[arg(value_parser = positive)]
    rows: Option<u64>,
    /// Columns of the matrix (at least 1): a row's elements are adjacent in memory.
    #[arg(value_parser = positive)]
    cols: Option<u64>,
    /// Scan down every column or along every row.
    #[arg(long, default_value = "columns")]
    axis: AxisArg,
    /// Element type (default u32; a .npy input brings its own).
    #[arg(long = "type", value_name = "TYPE")]
    ty: Option<BatchedType>,
    /// The operator combining the elements of a row or column.
    #[arg(long, default_value = "add")]
    op: BatchedOp,
    /// Exclusive scans (each row's or column's first element gets the identity).
    #[arg(long)]
    exclusive: bool,
    /// The kernel (auto picks by shape).
    #[arg(long, default_value = "auto")]
    kernel: BatchedKernelArg,
    /// --input: a two-dimensional C-ordered .npy matrix (an empty one of any shape too), or a raw
    /// file of ROWS x COLS elements (with --type); --output: its scans, of the same shape.
    #[command(flatten)]
    files: Files,
    #[command(flatten)]
    runs: Runs,
}

/// Where the segments come from, as the arguments say.
enum Source<'a> {
    Heads(&'a Path),
    /// Offsets from a file of the type given, or generated.
    Offsets(Option<(&'a Path, ElemType)>),
    Keys(Option<&'a Path>, ElemType),
    Rows(u64),
    /// Random head flags.
    Random,
}

impl<'a> Source<'a> {
    /// The segments `args` ask for, their files' types and lengths checked against `n` elements.
    fn of(args: &'a SegmentedArgs, n: u64) -> Result<Source<'a>> {
        let given = args.files.input.is_some();
        let file = |flag: &str, path: &'a Option<Option<PathBuf>>| -> Result<Option<Option<&'a Path>>> {
            match (path.as_ref().map(|p| p.as_deref()), given) {
                (Some(None), true) => Err(Error::invalid(format!("{flag} with --input needs a FILE"))),
                (Some(Some(_)), false) => Err(Error::invalid(format!("{flag} FILE goes with --input, its values"))),
                (p, _) => Ok(p),
            }
        };
        let (offsets, keys) = (file("--offsets", &args.offsets)?, file("--keys", &args.keys)?);
        if args.key_type.is_some() && keys.is_none() {
            return Err(Error::invalid("--key-type is the type of the --keys: give --keys"));
        }
        if args.offset_type.is_some() && !matches!(offsets, Some(Some(_))) {
            return Err(Error::invalid("--offset-type is the type of an --offsets FILE; generated offsets have none"));
        }
        let source = match (&args.heads, offsets, keys, args.rows_of) {
            (Some(h), ..) => Source::Heads(h),
            (_, Some(Some(path)), ..) => {
                let chosen = Some(("--offset-type", args.offset_type.map(|t| t.0)));
                Source::Offsets(Some((path, io::side_type_of(path, "--offsets", &OFFSET_TYPES, chosen)?)))
            }
            (_, Some(None), ..) => Source::Offsets(None),
            (_, _, Some(k), _) => {
                let requested = args.key_type.map(|t| t.0);
                let ty = match k {
                    Some(path) => io::side_type_of(
                        path,
                        "--keys",
                        &types_of(Family::SegmentedKeyHeads),
                        Some(("--key-type", requested)),
                    )?,
                    None => requested.unwrap_or(ElemType::U32),
                };
                Source::Keys(k, ty)
            }
            (.., Some(c)) => Source::Rows(c),
            _ if given => {
                return Err(Error::invalid(
                    "--input needs its segments: --heads FILE, --offsets FILE, --keys FILE or --rows-of C",
                ))
            }
            _ => Source::Random,
        };
        match source {
            Source::Heads(path) => io::check_flags(path, "--heads", n)?,
            Source::Keys(Some(path), ty) => io::check_same_len(path, "--keys", ty, n)?,
            Source::Rows(c) if !n.is_multiple_of(c) => {
                return Err(Error::invalid(format!("{n} elements are not whole rows of {c}")));
            }
            _ => {}
        }
        Ok(source)
    }

    /// Bytes of the segments on the host (as given, and the head flags the check makes) and on
    /// the device (with the head flags the GPU makes), for `n` elements.
    fn bytes(&self, n: u64, what: &str) -> Result<(u64, u64)> {
        Ok(match self {
            Source::Heads(_) | Source::Random => (2 * n, n),
            Source::Offsets(Some((path, ty))) => {
                let m = bytes_of(io::input_len(path, *ty)?, 8, what)?;
                // Read as they are, widened, and the check's head flags.
                (total(&[m, m, n], what)?, total(&[m, n], what)?)
            }
            // Random offsets: about one per mean length, at most one per element.
            Source::Offsets(None) => {
                (total(&[bytes_of(n, 8, what)?, n], what)?, total(&[bytes_of(n, 8, what)?, n], what)?)
            }
            Source::Keys(_, ty) => {
                let k = bytes_of(n, ty.size() as u64, what)?;
                // Any heads the scan by key makes lie in its temporary storage.
                (total(&[k, n], what)?, k)
            }
            Source::Rows(_) => (n, 0),
        })
    }
}

pub fn segmented(args: &SegmentedArgs, global: &Global) -> Result<bool> {
    let (tuning, _) = global.resolve()?;
    let ty = args.files.elem_type(args.ty.map(|t| t.0), ElemType::U32, &types_of(Family::Segmented), "segmented")?;
    let op = args.op.0;
    let count = args.files.len(ty, args.n)?;
    let source = Source::of(args, count)?;
    args.files.out.check(&[])?;
    let marks = match source {
        Source::Keys(_, k) => Marks::Keys(k),
        Source::Rows(_) => Marks::Fixed,
        Source::Heads(_) | Source::Offsets(_) | Source::Random => Marks::Flags,
    };
    let plan = gpu_scan::plan::segmented::plan(&tuning, ty, op, count, args.exclusive, args.kernel.0, marks)?;
    let what = format!("a segmented scan of {count} {}", ty.name());
    let bytes = bytes_of(count, ty.size() as u64, &what)?;
    let (host, device) = source.bytes(count, &what)?;
    // The input, its segments, the result read back and the CPU's.
    let needs = Needs {
        host: total(&[bytes, host, bytes, bytes], &what)?,
        device: total(&[bytes, device, bytes, plan.temp_bytes(count)], &what)?,
        what,
    };
    with_elem_type!(ty, T => segmented_typed::<T>(args, global, count, source, &needs))
}

fn segmented_typed<T: io::FileElement>(
    args: &SegmentedArgs,
    global: &Global,
    count: u64,
    source: Source,
    needs: &Needs,
) -> Result<bool> {
    let n = host_len(count, "N")?;
    let (op, seed, mean) = (args.op.0, args.runs.seed, args.mean_length);
    // Files are read and checked before the GPU opens; generated values are made after.
    let given = match &args.files.input {
        Some(path) => {
            memory::check(&needs.what, needs.host)?;
            let data = io::read::<T>(path)?;
            let segments = match source {
                Source::Heads(h) => Segments::Heads(io::read_flags(h)?),
                Source::Offsets(Some((o, ty))) => Segments::Offsets(read_offsets(o, ty, count)?),
                Source::Keys(Some(k), ty) => Segments::Keys(with_key_type!(ty, K => read_keys::<K, T>(k)?)),
                Source::Rows(c) => Segments::Rows(c),
                Source::Offsets(None) | Source::Keys(None, _) | Source::Random => unreachable!("files with --input"),
            };
            Some((data, segments, path.display().to_string()))
        }
        None => None,
    };
    let make = || -> Result<Segmented<T>> {
        let (data, segments, from) = match given {
            Some(given) => given,
            None => {
                // A segment starts where the seeded bits are a multiple of the mean length.
                let head = |i: usize| input::bits(seed ^ 0x5e9, i as u64).is_multiple_of(mean);
                let segments = match source {
                    Source::Random => Segments::Heads(memory::from_fn(n, "the segment heads", |i| head(i) as u8)?),
                    Source::Offsets(_) => {
                        Segments::Offsets((0..n).into_par_iter().filter(|&i| head(i)).map(|i| i as u64).collect())
                    }
                    Source::Keys(_, ty) => Segments::Keys(with_key_type!(ty, K => runs::<K, T>(n, head)?)),
                    Source::Rows(c) => Segments::Rows(c),
                    Source::Heads(_) => unreachable!("--heads requires --input"),
                };
                (memory::generate::<T>(op, seed, n)?, segments, format!("mean length {mean}"))
            }
        };
        let opts = SegmentedOptions::new(op).exclusive(args.exclusive).kernel(args.kernel.0);
        Ok(Segmented { data, segments, from, opts, buffers: None, temp: TempStorage::new(), got: Vec::new() })
    };
    let ran = experiment::run(global, args.runs.iters, needs, make)?;
    let got = &ran.exp.got;
    let force = args.files.out.force;
    let outputs =
        args.files.out.output.iter().map(|p| (p.as_path(), Box::new(move |p: &Path| io::write(p, got, force)) as _));
    io::write_outputs(ran.passed, outputs.collect())?;
    Ok(ran.passed)
}

/// The segment start offsets of `ty` in `path`, widened to u64: an error naming the file unless
/// they are non-decreasing and between 0 and `n` (an offset of `n` starts no segment, so CSR row
/// offsets may be given as they are).
fn read_offsets(path: &Path, ty: ElemType, n: u64) -> Result<Vec<u64>> {
    let bad = |what: String| Error::invalid(format!("{}: {what}", path.display()));
    let signed = |v: Vec<i64>| -> Result<Vec<u64>> {
        match v.iter().position(|&o| o < 0) {
            Some(i) => Err(bad(format!("offset {} at position {i} is negative", v[i]))),
            None => Ok(v.into_iter().map(|o| o as u64).collect()),
        }
    };
    let offsets = match ty {
        ElemType::U64 => io::read::<u64>(path)?,
        ElemType::U32 => io::read::<u32>(path)?.into_iter().map(u64::from).collect(),
        ElemType::I64 => signed(io::read::<i64>(path)?)?,
        _ => signed(io::read::<i32>(path)?.into_iter().map(i64::from).collect())?,
    };
    if let Some(i) = offsets.iter().position(|&o| o > n) {
        return Err(bad(format!("offset {} at position {i} is beyond the input's {n} elements", offsets[i])));
    }
    if let Some(i) = offsets.windows(2).position(|w| w[0] > w[1]) {
        return Err(bad(format!(
            "offsets are not sorted: {} at position {} follows {}; sort them (numpy: np.sort)",
            offsets[i + 1],
            i + 1,
            offsets[i]
        )));
    }
    Ok(offsets)
}

/// Runs `$body` with `$K` bound to the key type of the runtime [`ElemType`] `$ty` (`--key-type`
/// offers the integer types alone).
macro_rules! with_key_type {
    ($ty:expr, $K:ident => $body:expr) => {
        match $ty {
            ElemType::U8 => {
                type $K = u8;
                $body
            }
            ElemType::U16 => {
                type $K = u16;
                $body
            }
            ElemType::U32 => {
                type $K = u32;
                $body
            }
            ElemType::I32 => {
                type $K = i32;
                $body
            }
            ElemType::U64 => {
                type $K = u64;
                $body
            }
            ElemType::I64 => {
                type $K = i64;
                $body
            }
            ElemType::F32 | ElemType::F64 => unreachable!("--key-type offers integer types alone"),
        }
    };
}
use with_key_type;

/// The keys file `path` of `K`, for a scan by key of `T`.
fn read_keys<K: io::FileElement + Key, T: Element>(path: &Path) -> Result<Box<dyn KeyArray<T>>> {
    Ok(Box::new(KeysOf { keys: io::read::<K>(path)?, device: None }))
}

/// Keys of `n` elements in runs that end where `head` says: each run's key is the number of runs
/// before it (wrapping in `K`, so that neighbours always differ).
fn runs<K: Element + Key, T: Element>(n: usize, head: impl Fn(usize) -> bool) -> Result<Box<dyn KeyArray<T>>> {
    let mut keys = memory::with_capacity::<K>(n, "the keys")?;
    let mut run = 0u64;
    for i in 0..n {
        run += (i > 0 && head(i)) as u64;
        keys.push(K::from_bits(run));
    }
    Ok(Box::new(KeysOf { keys, device: None }))
}

/// The keys of a scan by key, of any integer type, behind one interface for a scan of `T`.
trait KeyArray<T>: Send + Sync {
    fn ty(&self) -> ElemType;
    /// Whether a segment starts at `i`: the key differs from the one before.
    fn head(&self, i: usize) -> bool;
    fn prepare(&mut self, gpu: &Gpu) -> Result<()>;
    fn scan(
        &mut self,
        gpu: &Gpu,
        input: &CudaSlice<T>,
        output: &mut CudaSlice<T>,
        opts: &SegmentedOptions,
        temp: &mut TempStorage,
    ) -> Result<()>;
}

struct KeysOf<K> {
    keys: Vec<K>,
    device: Option<CudaSlice<K>>,
}

impl<K: Element + Key, T: Element> KeyArray<T> for KeysOf<K> {
    fn ty(&self) -> ElemType {
        K::TYPE
    }

    fn head(&self, i: usize) -> bool {
        i == 0 || self.keys[i] != self.keys[i - 1]
    }

    fn prepare(&mut self, gpu: &Gpu) -> Result<()> {
        self.device = Some(gpu.upload(gpu.stream(), "keys", &self.keys)?);
        Ok(())
    }

    fn scan(
        &mut self,
        gpu: &Gpu,
        input: &CudaSlice<T>,
        output: &mut CudaSlice<T>,
        opts: &SegmentedOptions,
        temp: &mut TempStorage,
    ) -> Result<()> {
        let keys = self.device.as_ref().expect("prepared");
        gpu.scan_by_key(gpu.stream(), keys, input, output, opts, temp)
    }
}

/// The segments of a segmented scan.
enum Segments<T> {
    /// Head flags: a segment starts at every non-zero byte (and at 0).
    Heads(Vec<u8>),
    /// Start offsets, made into head flags on the GPU.
    Offsets(Vec<u64>),
    /// Keys, scanned by key.
    Keys(Box<dyn KeyArray<T>>),
    /// Segments of this many elements.
    Rows(u64),
}

struct Segmented<T> {
    data: Vec<T>,
    segments: Segments<T>,
    /// The input's file, or the generated segments' mean length.
    from: String,
    opts: SegmentedOptions,
    buffers: Option<Device<T>>,
    temp: TempStorage,
    /// The result the last check read back.
    got: Vec<T>,
}

/// The segmented scan's device buffers: the input, the output, the head flags (given, or made
/// from the offsets) and the offsets.
struct Device<T> {
    input: CudaSlice<T>,
    output: CudaSlice<T>,
    heads: Option<CudaSlice<u8>>,
    offsets: Option<CudaSlice<u64>>,
}

impl<T: Element> Segmented<T> {
    /// Where a segment starts, a byte per element, as the CPU sees it.
    fn cpu_heads(&self) -> Result<Vec<u8>> {
        let n = self.data.len();
        match &self.segments {
            Segments::Heads(h) => memory::from_fn(n, "the head flags", |i| (h[i] != 0) as u8),
            Segments::Offsets(offsets) => {
                let mut heads = memory::from_fn(n, "the head flags", |_| 0u8)?;
                offsets.iter().filter(|&&o| o < n as u64).for_each(|&o| heads[o as usize] = 1);
                Ok(heads)
            }
            Segments::Keys(k) => memory::from_fn(n, "the head flags", |i| k.head(i) as u8),
            Segments::Rows(c) => memory::from_fn(n, "the head flags", |i| (i as u64).is_multiple_of(*c) as u8),
        }
    }
}

impl<T: Element> Experiment for Segmented<T> {
    fn title(&self) -> String {
        let what = match &self.segments {
            Segments::Heads(h) => format!("head flags ({} set), {}", h.iter().filter(|&&h| h != 0).count(), self.from),
            Segments::Offsets(o) => format!("{} start offsets, {}", o.len(), self.from),
            Segments::Keys(k) => format!("by {} key, {}", k.ty().name(), self.from),
            Segments::Rows(c) => format!("{} rows of {c}", self.data.len() as u64 / c),
        };
        let kind = if self.opts.exclusive { "exclusive" } else { "inclusive" };
        format!("segmented: n={} {} {} {kind}, {what}", self.data.len(), T::TYPE.name(), self.opts.op.name())
    }

    fn traffic(&self) -> (u64, u64) {
        let (n, bytes) = (self.data.len() as u64, (self.data.len() * T::TYPE.size()) as u64);
        let segments = match &self.segments {
            Segments::Heads(_) => n,
            // The offsets read, the heads zeroed, set and read.
            Segments::Offsets(o) => 8 * o.len() as u64 + 2 * n,
            // The keys read, the heads written and read.
            Segments::Keys(k) => n * k.ty().size() as u64 + 2 * n,
            Segments::Rows(_) => 0,
        };
        (2 * bytes + segments, bytes)
    }

    fn prepare(&mut self, gpu: &Gpu) -> Result<()> {
        let stream = gpu.stream().clone();
        let n = self.data.len();
        let input = gpu.upload(&stream, "segmented input", &self.data)?;
        let output = gpu.alloc_zeros::<T>(&stream, "segmented output", n)?;
        let (heads, offsets) = match &mut self.segments {
            Segments::Heads(h) => (Some(gpu.upload(&stream, "segment heads", h)?), None),
            Segments::Offsets(o) => (
                Some(gpu.alloc_zeros::<u8>(&stream, "segment heads", n)?),
                Some(gpu.upload(&stream, "segment offsets", o)?),
            ),
            Segments::Keys(k) => {
                k.prepare(gpu)?;
                (None, None)
            }
            Segments::Rows(_) => (None, None),
        };
        self.buffers = Some(Device { input, output, heads, offsets });
        Ok(())
    }

    fn run(&mut self, gpu: &Gpu) -> Result<()> {
        let d = self.buffers.as_mut().expect("prepared");
        let (stream, opts, temp) = (gpu.stream(), &self.opts, &mut self.temp);
        if let (Some(offsets), Some(heads)) = (d.offsets.as_ref(), d.heads.as_mut()) {
            gpu.heads_from_offsets(stream, offsets, heads)?;
        }
        match (&mut self.segments, d.heads.as_ref()) {
            (Segments::Keys(k), _) => k.scan(gpu, &d.input, &mut d.output, opts, temp),
            (Segments::Rows(c), _) => gpu.segmented_scan_fixed(stream, &d.input, *c, &mut d.output, opts, temp),
            (_, Some(heads)) => gpu.segmented_scan(stream, &d.input, heads, &mut d.output, opts, temp),
            (_, None) => unreachable!("head flags are prepared for heads and offsets"),
        }
    }

    fn check(&mut self, gpu: &Gpu) -> Result<Check> {
        let d = self.buffers.as_ref().expect("prepared");
        let got = gpu.download(gpu.stream(), &d.output)?;
        let heads = self.cpu_heads()?;
        let (op, exclusive) = (self.opts.op, self.opts.exclusive);
        let want = reference::segmented(op, &self.data, |i| heads[i] != 0, exclusive)?;
        let mut wrong = segment_check(op, &self.data, &got, &want, |i| heads[i] != 0);
        // Heads made from offsets are a result too.
        if let (None, Some(_), Some(h)) = (&wrong, &d.offsets, &d.heads) {
            let made: Vec<u8> = gpu.download(gpu.stream(), h)?;
            wrong = first_difference(&made, &heads).map(|d| format!("head flags from the offsets: {d}"));
        }
        self.got = got;
        Ok(Check::new(format!("{} elements, every segment on its own", self.data.len()), wrong))
    }
}

/// Compares a segmented result with the sequential per-segment one: exactly for exact
/// operators; for float sums within 64 roundings of the segment's sum of magnitudes, for float
/// products within 2·eps per factor.
fn segment_check<T: Element>(
    op: Op,
    data: &[T],
    got: &[T],
    want: &[T],
    head: impl Fn(usize) -> bool,
) -> Option<String> {
    if !op.order_sensitive(T::TYPE) {
        return first_difference(got, want);
    }
    let eps = if T::TYPE.size() == 4 { f32::EPSILON as f64 } else { f64::EPSILON };
    let (mut mag, mut len) = (0.0f64, 0.0f64);
    for i in 0..data.len() {
        if head(i) {
            (mag, len) = (0.0, 0.0);
        }
        mag += data[i].to_f64().abs();
        len += 1.0;
        let (g, w) = (got[i].to_f64(), want[i].to_f64());
        let bound = if op == Op::Add { 64.0 * eps * mag } else { 2.0 * eps * len * w.abs() };
        if !(g == w || (g - w).abs() <= bound || (g.is_nan() && w.is_nan())) {
            return Some(format!("element {i}: expected {} within {bound:e}, got {}", want[i], got[i]));
        }
    }
    None
}

pub fn batched(args: &BatchedArgs, global: &Global) -> Result<bool> {
    let (tuning, _) = global.resolve()?;
    let op = args.op.0;
    let requested = args.ty.map(|t| t.0);
    // A file's shape (an empty vector's as it is, so that the result keeps it) and type.
    let (ty, shape) = match &args.files.input {
        Some(path) => {
            let dims = args.rows.zip(args.cols).map(|(r, c)| [r, c]);
            io::matrix_of(path, requested, &types_of(Family::BatchedRows), "batched", dims)?
        }
        None => match (args.rows, args.cols) {
            (Some(r), Some(c)) => (requested.unwrap_or(ElemType::U32), vec![r, c]),
            _ => return Err(Error::invalid("give ROWS and COLS, or --input")),
        },
    };
    let matrix = match shape[..] {
        [r, c] => Matrix::new(r, c),
        _ => Matrix::new(0, 0),
    };
    if let (Some(r), Some(c), Some(_)) = (args.rows, args.cols, &args.files.input) {
        if (r, c) != (matrix.rows, matrix.cols) {
            let Matrix { rows, cols } = matrix;
            return Err(Error::invalid(format!("ROWS x COLS is {r} x {c} but --input is {rows} x {cols}")));
        }
    }
    args.files.out.check(&[])?;
    let n = matrix.rows.checked_mul(matrix.cols).ok_or_else(|| Error::invalid("ROWS x COLS overflows"))?;
    let len = host_len(n, "ROWS x COLS")?;
    let opts = BatchedOptions::new(args.axis.0, op).exclusive(args.exclusive).kernel(args.kernel.0);
    let request = BatchedRequest {
        ty,
        op,
        exclusive: args.exclusive,
        matrix,
        axis: args.axis.0,
        kernel: args.kernel.0,
        aligned: true,
    };
    let (state, scratch) = gpu_scan::plan::batched::plan(&tuning, &request)?.temp_bytes();
    let what = format!("a batched scan of {} x {} {}", matrix.rows, matrix.cols, ty.name());
    let bytes = bytes_of(n, ty.size() as u64, &what)?;
    // The input, the result read back and the CPU's; down the columns the check also transposes
    // the input and the result.
    let copies = if args.axis.0 == Axis::Columns { 5 } else { 3 };
    let needs =
        Needs { host: bytes_of(bytes, copies, &what)?, device: total(&[bytes, bytes, state, scratch], &what)?, what };
    with_elem_type!(ty, T => {
        // A file is read before the GPU opens; generated values are made after.
        let given = match &args.files.input {
            Some(path) => {
                memory::check(&needs.what, needs.host)?;
                Some(io::read_shaped::<T>(path, shape.len())?)
            }
            None => None,
        };
        let make = || -> Result<Batched<T>> {
            let data = match given {
                Some(data) => data,
                None => memory::generate::<T>(op, args.runs.seed, len)?,
            };
            Ok(Batched { data, matrix, opts, buffers: None, temp: TempStorage::new(), got: Vec::new() })
        };
        let ran = experiment::run(global, args.runs.iters, &needs, make)?;
        let (got, force) = (&ran.exp.got, args.files.out.force);
        let shape = &shape;
        let outputs = args
            .files
            .out.output
            .iter()
            .map(|p| (p.as_path(), Box::new(move |p: &Path| io::write_shaped(p, got, shape, force)) as _));
        io::write_outputs(ran.passed, outputs.collect())?;
        Ok(ran.passed)
    })
}

struct Batched<T> {
    data: Vec<T>,
    matrix: Matrix,
    opts: BatchedOptions,
    buffers: Option<(CudaSlice<T>, CudaSlice<T>)>,
    temp: TempStorage,
    /// The result the last check read back.
    got: Vec<T>,
}

impl<T: Element> Experiment for Batched<T> {
    fn title(&self) -> String {
        let along = if self.opts.axis == Axis::Rows { "along each row" } else { "down each column" };
        let Matrix { rows, cols } = self.matrix;
        format!("batched: {rows} x {cols} {} {} {along}", T::TYPE.name(), self.opts.op.name())
    }

    fn traffic(&self) -> (u64, u64) {
        experiment::read_write_once::<T>(self.data.len())
    }

    fn prepare(&mut self, gpu: &Gpu) -> Result<()> {
        self.buffers = Some(experiment::in_and_out(gpu, &self.data)?);
        Ok(())
    }

    fn run(&mut self, gpu: &Gpu) -> Result<()> {
        let (d_in, d_out) = self.buffers.as_mut().expect("prepared");
        gpu.batched_scan(gpu.stream(), d_in, self.matrix, d_out, &self.opts, &mut self.temp)
    }

    fn check(&mut self, gpu: &Gpu) -> Result<Check> {
        let (_, d_out) = self.buffers.as_ref().expect("prepared");
        let got = gpu.download(gpu.stream(), d_out)?;
        // The CPU reference works on segments: rows as they are, columns after a transpose.
        let (r, c) = (self.matrix.rows as usize, self.matrix.cols as usize);
        let transpose = |v: &[T], rows: usize, cols: usize| -> Vec<T> {
            (0..cols).flat_map(|j| (0..rows).map(move |i| v[i * cols + j])).collect()
        };
        let (op, exclusive) = (self.opts.op, self.opts.exclusive);
        let wrong = if self.opts.axis == Axis::Rows {
            let want = reference::segmented(op, &self.data, |i| i % c == 0, exclusive)?;
            segment_check(op, &self.data, &got, &want, |i| i % c == 0)
        } else {
            let data_t = transpose(&self.data, r, c);
            let want_t = reference::segmented(op, &data_t, |i| i % r == 0, exclusive)?;
            segment_check(op, &data_t, &transpose(&got, r, c), &want_t, |i| i % r == 0)
        };
        self.got = got;
        Ok(Check::new(format!("{} elements", self.data.len()), wrong))
    }
}
