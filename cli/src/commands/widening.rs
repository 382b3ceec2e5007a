//! `scan --output-type`: the widening sum of narrow elements (generated, a list, or a file of
//! int8, uint8, int16, uint16, int32, uint32, float16, bfloat16 or bool) into a wider type,
//! checked against the CPU and timed like every scan.

use super::scan::Source as Values;
use crate::experiment::{self, Check, Experiment, Needs};
use crate::io::{self, bad, Format};
use crate::memory::{self, bytes_of, total};
use clap::builder::PossibleValue;
use clap::ValueEnum;
use gpu_scan::cudarc::driver::CudaSlice;
use gpu_scan::plan::scan::FixedOrder;
use gpu_scan::reference::{self as cpu, verify};
use gpu_scan::{input, Algorithm, ElemType, Error, Gpu, Op, Result, Source, TempStorage, WideningOptions, WidensTo};
use half::{bf16, f16};
use std::fmt::Display;
use std::io::{BufReader, Read};
use std::path::Path;
use std::str::FromStr;
use std::sync::OnceLock;

/// A type a widening scan reads: the library's sources, and `bool` (read as bytes of 0 or 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NarrowType {
    Source(Source),
    Bool,
}

impl NarrowType {
    const ALL: [NarrowType; 9] = [
        NarrowType::Source(Source::U8),
        NarrowType::Source(Source::I8),
        NarrowType::Source(Source::U16),
        NarrowType::Source(Source::I16),
        NarrowType::Source(Source::U32),
        NarrowType::Source(Source::I32),
        NarrowType::Source(Source::F16),
        NarrowType::Source(Source::Bf16),
        NarrowType::Bool,
    ];

    pub fn name(self) -> &'static str {
        match self {
            NarrowType::Source(s) => s.name(),
            NarrowType::Bool => "bool",
        }
    }

    /// The source the kernel reads: a bool is a byte.
    fn source(self) -> Source {
        match self {
            NarrowType::Source(s) => s,
            NarrowType::Bool => Source::U8,
        }
    }

    /// The NumPy type string, without the byte order (bfloat16 has none: raw files only).
    fn npy(self) -> Option<&'static str> {
        Some(match self.source() {
            _ if self == NarrowType::Bool => "b1",
            Source::U8 => "u1",
            Source::I8 => "i1",
            Source::U16 => "u2",
            Source::I16 => "i2",
            Source::U32 => "u4",
            Source::I32 => "i4",
            Source::F16 => "f2",
            Source::Bf16 => return None,
        })
    }

    fn of_npy(dtype: &str) -> Option<NarrowType> {
        let body = dtype.trim_start_matches(['<', '>', '|', '=']);
        NarrowType::ALL.into_iter().find(|t| t.npy() == Some(body))
    }

    fn parse(s: &str) -> Option<NarrowType> {
        NarrowType::ALL.into_iter().find(|t| t.name() == s)
    }
}

/// `scan --type`: an element type of the scans, or, with `--output-type`, a narrow type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InputType(pub &'static str);

impl InputType {
    /// The element type it names, if it names one.
    pub fn elem(self) -> Option<ElemType> {
        ElemType::parse(self.0)
    }

    fn narrow(self) -> Option<NarrowType> {
        NarrowType::parse(self.0)
    }
}

impl ValueEnum for InputType {
    fn value_variants<'a>() -> &'a [Self] {
        static ALL: OnceLock<Vec<InputType>> = OnceLock::new();
        ALL.get_or_init(|| {
            let elems = ElemType::ALL.into_iter().map(|t| t.name());
            let narrow = NarrowType::ALL.into_iter().map(|t| t.name()).filter(|n| ElemType::parse(n).is_none());
            elems.chain(narrow).map(InputType).collect()
        })
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let help = match self.elem() {
            Some(t) => crate::args::describe_type(t),
            None => format!("{} (with --output-type only)", self.0),
        };
        Some(PossibleValue::new(self.0).help(help))
    }
}

/// A widening scan as `scan` parsed it.
pub struct WideningRun<'a> {
    pub n: Option<u64>,
    pub ty: Option<InputType>,
    pub output_type: ElemType,
    pub exclusive: bool,
    pub init: Option<&'a str>,
    pub deterministic: bool,
    pub kernel: gpu_scan::ScanKernel,
    /// Generated, a file, or comma-separated values.
    pub values: Values,
    pub output: Option<&'a Path>,
    pub force: bool,
    pub seed: u64,
    pub iters: u32,
}

pub fn run(w: &WideningRun, global: &crate::args::Global) -> Result<bool> {
    let values = &w.values;
    let requested =
        w.ty.map(|t| {
            t.narrow().ok_or_else(|| {
                Error::invalid(format!("--output-type widens a narrow type; --type {} is not one: {}", t.0, names()))
            })
        })
        .transpose()?;
    let (ty, given) = match values {
        Values::File(path) => {
            let (ty, n) = file_type_and_len(path, requested)?;
            (ty, Some(n))
        }
        _ => (requested.unwrap_or(NarrowType::Source(Source::U8)), None),
    };
    if !ty.source().widens_to(w.output_type) {
        let to: Vec<&str> = ElemType::ALL.into_iter().filter(|&o| ty.source().widens_to(o)).map(|o| o.name()).collect();
        return Err(Error::invalid(format!(
            "--output-type {}: {} widens into {}",
            w.output_type.name(),
            ty.name(),
            to.join(", ")
        )));
    }
    if let Some(out) = w.output {
        io::check_writable(out, w.force)?;
    }
    macro_rules! pairs {
        ($($n:ty: $s:ident => [$($t:ident: $tt:ty),*];)*) => {
            match (ty.source(), w.output_type) {
                $($((Source::$s, ElemType::$t) => typed::<$n, $tt>(w, ty, values, given, global),)*)*
                (s, t) => unreachable!("{} widens into {}: checked above", s.name(), t.name()),
            }
        };
    }
    pairs! {
        u8: U8 => [U32: u32, U64: u64, I64: i64];
        i8: I8 => [U32: u32, U64: u64, I64: i64];
        u16: U16 => [U32: u32, U64: u64, I64: i64];
        i16: I16 => [U32: u32, U64: u64, I64: i64];
        u32: U32 => [U64: u64, I64: i64];
        i32: I32 => [U64: u64, I64: i64];
        f16: F16 => [F32: f32];
        bf16: Bf16 => [F32: f32];
    }
}

fn names() -> String {
    NarrowType::ALL.map(NarrowType::name).join(" ")
}

/// A narrow element as the command line reads, makes and prints it.
trait NarrowValue: Copy + Display + FromStr + Send + Sync + 'static {
    /// From its little-endian bytes.
    fn from_le(bytes: &[u8]) -> Self;
    /// A generated value from random bits: any value for integers, uniform in [0, 1) for
    /// floats.
    fn from_random(bits: u64) -> Self;
}

macro_rules! int_value {
    ($($t:ty),*) => { $(
        impl NarrowValue for $t {
            fn from_le(bytes: &[u8]) -> Self {
                <$t>::from_le_bytes(bytes.try_into().expect("one element's bytes"))
            }
            fn from_random(bits: u64) -> Self {
                bits as $t
            }
        }
    )* };
}
int_value!(u8, i8, u16, i16, u32, i32);

macro_rules! half_value {
    ($($t:ty),*) => { $(
        impl NarrowValue for $t {
            fn from_le(bytes: &[u8]) -> Self {
                <$t>::from_bits(u16::from_le_bytes(bytes.try_into().expect("one element's bytes")))
            }
            fn from_random(bits: u64) -> Self {
                <$t>::from_f32((bits >> 40) as f32 / (1u64 << 24) as f32)
            }
        }
    )* };
}
half_value!(f16, bf16);

/// The narrow type of `path` and its length, from a `.npy` header (agreeing with `requested`
/// when given) or a raw file's size (with `requested`), before anything is read.
fn file_type_and_len(path: &Path, requested: Option<NarrowType>) -> Result<(NarrowType, u64)> {
    let len = io::file_len(path)?;
    match Format::of(path) {
        Format::Npy => {
            let header = io::header_of(path)?;
            let ty = npy_type(path, &header)?;
            if let Some(r) = requested.filter(|&r| r != ty) {
                return Err(bad(path, format!("holds {}, but --type {} was given", ty.name(), r.name())));
            }
            Ok((ty, io::checked_shape(path, &header, ty.source().size() as u64, len)?[0]))
        }
        Format::Raw => {
            let ty = requested.ok_or_else(|| bad(path, "raw binary input needs --type (or use a .npy file)"))?;
            let size = ty.source().size() as u64;
            if len % size != 0 {
                return Err(bad(
                    path,
                    format!("{len} bytes is not a whole number of {size}-byte {} elements", ty.name()),
                ));
            }
            Ok((ty, len / size))
        }
    }
}

/// The narrow type of a one-dimensional, C-ordered, little-endian `.npy` array.
fn npy_type(path: &Path, header: &npyz::NpyHeader) -> Result<NarrowType> {
    let dtype = match header.dtype() {
        npyz::DType::Plain(t) => t.to_string(),
        other => return Err(bad(path, format!("structured dtype {other:?} is not supported; store a plain array"))),
    };
    let ty = NarrowType::of_npy(&dtype).ok_or_else(|| {
        let supported: Vec<&str> = NarrowType::ALL.iter().filter_map(|t| t.npy()).collect();
        bad(path, format!("dtype {dtype} cannot be widened; supported: {}", supported.join(" ")))
    })?;
    io::check_little_endian(path, header)?;
    io::check_layout(path, header, 1)?;
    Ok(ty)
}

/// Reads the `n` elements of `path` (checked by [`file_type_and_len`]) as `N`; a bool file must
/// hold only 0 and 1.
fn read_file<N: NarrowValue>(path: &Path, ty: NarrowType, n: usize) -> Result<Vec<N>> {
    let started = std::time::Instant::now();
    let v = read_file_untimed(path, ty, n);
    io::count_reading(started);
    v
}

fn read_file_untimed<N: NarrowValue>(path: &Path, ty: NarrowType, n: usize) -> Result<Vec<N>> {
    let size = ty.source().size();
    let file = std::fs::File::open(path).map_err(|e| bad(path, format!("cannot open: {e}")))?;
    let mut reader: Box<dyn Read> = match Format::of(path) {
        Format::Npy => {
            let npy = npyz::NpyFile::new(BufReader::new(file))
                .map_err(|e| bad(path, format!("not a valid .npy file: {e}")))?;
            Box::new(npy.into_inner())
        }
        Format::Raw => Box::new(BufReader::new(file)),
    };
    let mut v = memory::with_capacity::<N>(n, &path.display().to_string())?;
    let mut chunk = vec![0u8; size << 16];
    while v.len() < n {
        let take = (n - v.len()).min(1 << 16) * size;
        reader.read_exact(&mut chunk[..take]).map_err(|e| bad(path, format!("truncated or unreadable data: {e}")))?;
        if ty == NarrowType::Bool {
            io::check_bools(path, v.len(), &chunk[..take])?;
        }
        v.extend(chunk[..take].chunks_exact(size).map(N::from_le));
    }
    Ok(v)
}

fn typed<N: NarrowValue + WidensTo<T>, T: crate::io::FileElement>(
    w: &WideningRun,
    ty: NarrowType,
    values: &Values,
    given: Option<u64>,
    global: &crate::args::Global,
) -> Result<bool> {
    let init = w
        .init
        .map(|v| {
            v.parse::<T>().map_err(|_| Error::invalid(format!("--init `{v}` is not a valid {} value", T::TYPE.name())))
        })
        .transpose()?;
    let list: Option<Vec<N>> = match values {
        Values::List(s) => Some(parse_list::<N>(s, ty)?),
        _ => None,
    };
    let given = given.or(list.as_ref().map(|l| l.len() as u64));
    let n = match (given, w.n) {
        (Some(g), Some(n)) if g != n => return Err(Error::invalid(format!("N is {n} but --input has {g} values"))),
        (Some(g), _) => g,
        (None, Some(n)) => n,
        (None, None) => return Err(Error::invalid("give N, the number of elements, or --input")),
    };
    let len = crate::args::host_len(n, "N")?;
    let opts = WideningOptions::new().exclusive(w.exclusive).init(init).deterministic(w.deterministic);
    let what = format!("a widening scan of {n} {} into {}", ty.name(), T::TYPE.name());
    let narrow = bytes_of(n, ty.source().size() as u64, &what)?;
    let wide = bytes_of(n, T::TYPE.size() as u64, &what)?;
    // The input, the result read back, the widened input and the CPU's scan of it (two f64 per
    // element for a float sum's reference).
    let reference = if T::TYPE.is_float() { bytes_of(n, 16, &what)? } else { wide };
    let host = total(&[narrow, wide, wide, reference], &what)?;
    let opts = opts.kernel(w.kernel);
    let request = gpu_scan::plan::scan::WideningRequest {
        src: ty.source(),
        ty: T::TYPE,
        n,
        exclusive: w.exclusive,
        has_init: init.is_some(),
        deterministic: w.deterministic,
        kernel: w.kernel,
        aligned: true,
    };
    let plan = gpu_scan::plan::scan::widening(&global.resolve()?.0, &request)?;
    let kernel = match plan.family() {
        Some(scan_abi::Family::WideningPipelined(_)) => " pipelined kernel",
        _ => " tiles kernel",
    };
    if n == 0 {
        return super::scan::empty::<T>(&what, w.output, w.force);
    }
    let temp_bytes = plan.temp_bytes();
    let needs = Needs { device: total(&[narrow, wide, temp_bytes.0, temp_bytes.1], &what)?, host, what };
    let seed = w.seed;
    // A file is read (a bool file's values checked) before the GPU opens; generated values are
    // made after.
    let read = match (values, list) {
        (_, Some(v)) => Some(v),
        (Values::File(path), None) => {
            memory::check(&needs.what, needs.host)?;
            Some(read_file::<N>(path, ty, len)?)
        }
        _ => None,
    };
    let make = || -> Result<Widening<N, T>> {
        let data = match read {
            Some(v) => v,
            None => memory::from_fn(len, "the generated input", |i| N::from_random(input::bits(seed, i as u64)))?,
        };
        let tolerance = if given.is_some() { verify::Tolerance::WorstCase } else { verify::Tolerance::Statistical };
        Ok(Widening { data, ty, opts, kernel, buffers: None, temp: TempStorage::new(), got: Vec::new(), tolerance })
    };
    let ran = experiment::run(global, w.iters, &needs, make)?;
    let (got, force) = (&ran.exp.got, w.force);
    let outputs = w.output.iter().map(|&p| (p, Box::new(move |p: &Path| io::write(p, got, force)) as _));
    io::write_outputs(ran.passed, outputs.collect())?;
    Ok(ran.passed)
}

/// Comma-separated values of `ty` (bools as 0/1 or false/true, read as bytes).
fn parse_list<N: NarrowValue>(s: &str, ty: NarrowType) -> Result<Vec<N>> {
    s.split(',')
        .map(str::trim)
        .map(|v| {
            let value = match (ty, v) {
                (NarrowType::Bool, "0" | "false") => "0".parse::<N>().ok(),
                (NarrowType::Bool, "1" | "true") => "1".parse::<N>().ok(),
                (NarrowType::Bool, _) => None,
                _ => v.parse::<N>().ok(),
            };
            value.ok_or_else(|| Error::invalid(format!("--input: `{v}` is not a valid {} value", ty.name())))
        })
        .collect()
}

/// One widening scan of `data`: on the device, `(input, output)`.
struct Widening<N: WidensTo<T>, T: gpu_scan::Element> {
    data: Vec<N>,
    ty: NarrowType,
    opts: WideningOptions<T>,
    /// Which kernel the planner chose, for the title.
    kernel: &'static str,
    buffers: Option<(CudaSlice<N>, CudaSlice<T>)>,
    temp: TempStorage,
    got: Vec<T>,
    tolerance: verify::Tolerance,
}

impl<N: NarrowValue + WidensTo<T>, T: gpu_scan::Element> Experiment for Widening<N, T> {
    fn title(&self) -> String {
        let o = &self.opts;
        format!(
            "scan: n={} {} into {} add {}{}, widening single-pass{}{}",
            self.data.len(),
            self.ty.name(),
            T::TYPE.name(),
            if o.exclusive { "exclusive" } else { "inclusive" },
            o.init.map(|v| format!(" init={v}")).unwrap_or_default(),
            self.kernel,
            if o.deterministic && T::TYPE.is_float() { " (deterministic)" } else { "" }
        )
    }

    /// Every element read narrow and written wide; the copy yardstick moves as many bytes.
    fn traffic(&self) -> (u64, u64) {
        let moved = (self.data.len() * (self.ty.source().size() + T::TYPE.size())) as u64;
        (moved, moved / 2)
    }

    fn prepare(&mut self, gpu: &Gpu) -> Result<()> {
        let stream = gpu.stream().clone();
        let input = gpu.upload(&stream, "input", &self.data)?;
        let output = gpu.alloc_zeros::<T>(&stream, "output", self.data.len())?;
        self.buffers = Some((input, output));
        Ok(())
    }

    fn run(&mut self, gpu: &Gpu) -> Result<()> {
        let stream = gpu.stream().clone();
        let (d_in, d_out) = self.buffers.as_mut().expect("prepared");
        gpu.widening_scan(&stream, d_in, d_out, &self.opts, &mut self.temp)
    }

    fn check(&mut self, gpu: &Gpu) -> Result<Check> {
        let (_, d_out) = self.buffers.as_ref().expect("prepared");
        self.got = gpu.download(gpu.stream(), d_out)?;
        let o = &self.opts;
        let wide: Vec<T> = cpu::widened(&self.data);
        let replicated = o.deterministic && T::TYPE.is_float();
        let verdict = if replicated {
            verify::verify_replica(FixedOrder::Tiles, Op::Add, &wide, o.exclusive, o.init, &self.got)?
        } else {
            verify::verify_with(self.tolerance, Op::Add, Algorithm::SinglePass, &wide, o.exclusive, o.init, &self.got)?
        };
        Ok(super::scan::check_of(&verdict, replicated))
    }
}
