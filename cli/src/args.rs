//! What every subcommand parses alike: counts (`1e8`, `1.5e3`, `2^28`), sizes, ranges, the
//! element types, operators, algorithms and kernels as clap value enums (named by the library,
//! each command offering the types and operators its kernels are built for), and the options
//! shared by every GPU subcommand.

use clap::builder::PossibleValue;
use clap::{Args, ValueEnum};
use gpu_scan::{
    Algorithm, Axis, BatchedKernel, BlockAlgo, CompactKernel, ElemType, Error, Op, Propagation, ScanKernel,
    SegmentedKernel, StatusOrdering, Tuning,
};
use scan_abi::Family;
use std::path::PathBuf;
use std::sync::OnceLock;

/// A clap value enum over a library enum: its values are the library's names, listed once there,
/// each with its help.
macro_rules! value_enum {
    ($(#[$doc:meta])* $name:ident($inner:ty): $all:expr, $label:expr, $help:expr) => {
        $(#[$doc])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq)]
        pub struct $name(pub $inner);

        impl ValueEnum for $name {
            fn value_variants<'a>() -> &'a [Self] {
                static ALL: OnceLock<Vec<$name>> = OnceLock::new();
                ALL.get_or_init(|| $all.into_iter().map($name).collect())
            }

            fn to_possible_value(&self) -> Option<PossibleValue> {
                let help: String = $help(self.0).into();
                Some(PossibleValue::new($label(self.0)).help(help))
            }
        }
    };
}

/// The help of `value` in `table` (empty where it has none: a test makes sure every value has).
fn described<V: PartialEq>(value: V, table: &[(V, &'static str)]) -> &'static str {
    table.iter().find(|(v, _)| *v == value).map_or("", |(_, h)| h)
}

/// The element types `family`'s kernels are built for (with some operator, for families named
/// per operator).
pub fn types_of(family: Family) -> Vec<ElemType> {
    let built = |t: ElemType| family.built_for(t, None) || Op::ALL.iter().any(|&o| family.built_for(t, Some(o)));
    ElemType::ALL.into_iter().filter(|&t| built(t)).collect()
}

/// The operators `family`'s kernels are built for, on some type.
pub fn ops_of(family: Family) -> Vec<Op> {
    Op::ALL.into_iter().filter(|&o| ElemType::ALL.iter().any(|&t| family.built_for(t, Some(o)))).collect()
}

/// What an element type is, in words: `32-bit signed integer`.
pub fn describe_type(t: ElemType) -> String {
    let kind = match t.name().as_bytes()[0] {
        b'f' => "float",
        b'i' => "signed integer",
        _ => "unsigned integer",
    };
    format!("{}-bit {kind}", 8 * t.size())
}

value_enum!(
    /// An element type of the scans.
    Type(ElemType): ElemType::ALL, ElemType::name, describe_type
);
value_enum!(
    /// An element type of the compaction.
    CompactType(ElemType): types_of(Family::Compact), ElemType::name, describe_type
);
value_enum!(
    /// A key type of the radix sort.
    SortType(ElemType): types_of(Family::SortPass), ElemType::name, describe_type
);
value_enum!(
    /// A value type of the histogram.
    HistogramType(ElemType): types_of(Family::PartitionScatter), ElemType::name, describe_type
);
value_enum!(
    /// An element type of the segmented scan.
    SegmentedType(ElemType): types_of(Family::Segmented), ElemType::name, describe_type
);
value_enum!(
    /// A key type of the scan by key.
    KeyType(ElemType): types_of(Family::SegmentedKeyHeads), ElemType::name, describe_type
);
/// The integer types an offsets file may hold (NumPy's default integers among them).
pub const OFFSET_TYPES: [ElemType; 4] = [ElemType::U64, ElemType::I64, ElemType::U32, ElemType::I32];
value_enum!(
    /// The type of a file of segment start offsets.
    OffsetType(ElemType): OFFSET_TYPES, ElemType::name, describe_type
);
value_enum!(
    /// The type of written positions.
    IndexType(ElemType): [ElemType::U32, ElemType::U64], ElemType::name, |t| match t {
        ElemType::U32 => "32-bit positions (the default below 2^32 elements)",
        _ => "64-bit positions (the default from 2^32 elements)",
    }
);
value_enum!(
    /// An element type of the batched scan.
    BatchedType(ElemType): types_of(Family::BatchedRows), ElemType::name, describe_type
);
value_enum!(
    /// A float type of the linear recurrence.
    RecurrenceType(ElemType): types_of(Family::Recurrence), ElemType::name, describe_type
);
value_enum!(
    /// A type a widening scan sums into.
    WideType(ElemType): ElemType::ALL.into_iter().filter(|&t| gpu_scan::Source::ALL.iter().any(|s| s.widens_to(t))),
        ElemType::name, describe_type
);
value_enum!(
    /// A float type of the error study.
    FloatType(ElemType): ElemType::ALL.into_iter().filter(|t| t.is_float()), ElemType::name, describe_type
);
value_enum!(
    /// A scan operator.
    Operator(Op): Op::ALL, Op::name, Op::describe
);
value_enum!(
    /// An operator of the segmented scan.
    SegmentedOp(Op): ops_of(Family::Segmented), Op::name, Op::describe
);
value_enum!(
    /// An operator of the batched scan.
    BatchedOp(Op): ops_of(Family::BatchedRows), Op::name, Op::describe
);
/// The axis of a batched scan: `columns` (or `0`, as NumPy and torch number it) or `rows` (`1`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AxisArg(pub Axis);

impl ValueEnum for AxisArg {
    fn value_variants<'a>() -> &'a [Self] {
        &[AxisArg(Axis::Columns), AxisArg(Axis::Rows)]
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        Some(match self.0 {
            Axis::Columns => PossibleValue::new("columns").alias("0").help("scan down every column (axis 0)"),
            Axis::Rows => PossibleValue::new("rows").alias("1").help("scan along every row (axis 1)"),
        })
    }
}
value_enum!(
    /// The single-pass kernel.
    Kernel(ScanKernel): ScanKernel::ALL, ScanKernel::name, |k| described(k, &[
        (ScanKernel::Auto, "as the tuning table says for the size, type and operator"),
        (ScanKernel::Tiles, "one tile per block, the tile in registers"),
        (ScanKernel::Staged, "one tile per block, staged in shared memory (4- and 8-byte elements)"),
        (ScanKernel::Pipelined, "a persistent grid of warp roles, several tiles in flight per block (relaxed ordering, 16-byte aligned buffers)"),
    ])
);
value_enum!(
    /// The batched-scan kernel.
    BatchedKernelArg(BatchedKernel): BatchedKernel::ALL, BatchedKernel::name, |k| described(k, &[
        (BatchedKernel::Auto, "as the tuning table says for the shape"),
        (BatchedKernel::ColumnTiles, "columns: tiles of rows by strips of columns, a look-back chain per column"),
        (BatchedKernel::VectorTiles, "columns: tiles of 16-byte vectors of adjacent columns (rows on 16-byte boundaries)"),
        (BatchedKernel::BulkTiles, "columns: tiles brought into shared memory by bulk copies (rows of a power of two of 16-byte vectors)"),
        (BatchedKernel::ColumnVectors, "columns: one thread per vector of columns walks every row (few rows)"),
        (BatchedKernel::ShortRows, "rows: tiles of whole rows (rows of at most one tile)"),
        (BatchedKernel::RowBlocks, "rows: one block walks each row"),
        (BatchedKernel::RowChains, "rows: one single-pass chain of tiles per row"),
        (BatchedKernel::Pipelined, "columns: one pipelined scan of 16- or 32-byte rows; rows: one pipelined launch"),
    ])
);
value_enum!(
    /// The compaction kernel.
    CompactKernelArg(CompactKernel): CompactKernel::ALL, CompactKernel::name, |k| described(k, &[
        (CompactKernel::Auto, "as the tuning table says"),
        (CompactKernel::Tiles, "one tile per block"),
        (CompactKernel::Pipelined, "the pipelined kernel's warp roles (4- and 8-byte elements)"),
    ])
);
value_enum!(
    /// The segmented-scan kernel.
    SegmentedKernelArg(SegmentedKernel): SegmentedKernel::ALL, SegmentedKernel::name, |k| described(k, &[
        (SegmentedKernel::Auto, "as the tuning table says"),
        (SegmentedKernel::Tiles, "one tile per block"),
        (SegmentedKernel::Pipelined, "the pipelined kernel's warp roles, flags or keys staged beside the values (not --rows-of)"),
    ])
);
value_enum!(
    /// How the hierarchical strategy combines tile results.
    PropagationArg(Propagation): Propagation::ALL, Propagation::name, |p| described(p, &[
        (Propagation::ReduceThenScan, "reduce tiles, scan the totals, rescan tiles from their offsets (3n moves)"),
        (Propagation::ScanThenAdd, "the lecture's form: scan tiles, scan the totals, add offsets (4n moves)"),
    ])
);
value_enum!(
    /// Memory ordering of the single-pass tile-status words.
    OrderingArg(StatusOrdering): StatusOrdering::ALL, StatusOrdering::name, |o| described(o, &[
        (StatusOrdering::Relaxed, "relaxed atomics: value and flag share one atomic word"),
        (StatusOrdering::AcquireRelease, "release stores and acquire loads: kept to measure what they cost"),
    ])
);

/// A device-wide strategy, or a block algorithm (the hierarchical strategy with it inside).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Algo {
    SinglePass,
    Hierarchical(Option<BlockAlgo>),
    Naive,
}

impl Algo {
    pub fn algorithm(self, propagation: Propagation) -> Algorithm {
        match self {
            Algo::SinglePass => Algorithm::SinglePass,
            Algo::Naive => Algorithm::Naive,
            Algo::Hierarchical(block) => {
                Algorithm::Hierarchical { block: block.unwrap_or(BlockAlgo::WarpShuffle), propagation }
            }
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Algo::SinglePass => "single-pass",
            Algo::Hierarchical(None) => "hierarchical",
            Algo::Hierarchical(Some(b)) => b.name(),
            Algo::Naive => "naive",
        }
    }
}

impl ValueEnum for Algo {
    fn value_variants<'a>() -> &'a [Self] {
        static ALL: OnceLock<Vec<Algo>> = OnceLock::new();
        ALL.get_or_init(|| {
            let strategies = [Algo::SinglePass, Algo::Hierarchical(None), Algo::Naive];
            strategies.into_iter().chain(BlockAlgo::ALL.map(|b| Algo::Hierarchical(Some(b)))).collect()
        })
    }

    fn to_possible_value(&self) -> Option<PossibleValue> {
        let help = match self {
            Algo::SinglePass => "single pass with decoupled look-back: one launch, reads n and writes n (default)",
            Algo::Hierarchical(None) => "tile scans, tile totals scanned recursively, offsets combined back",
            Algo::Hierarchical(Some(b)) => b.describe(),
            Algo::Naive => "one thread per output sums its whole prefix, O(n^2) work (n <= 262144)",
        };
        Some(PossibleValue::new(self.name()).help(help))
    }
}

/// Parses a count: `100000000`, `1_000_000`, `1e8`, `1.5e3` (when whole) or `2^28`.
pub fn parse_count(s: &str) -> Result<u64, String> {
    let t = s.trim().replace('_', "");
    let bad = || format!("`{s}` is not a count (examples: 100000000, 1e8, 1.5e3, 2^28)");
    let digits = |d: &str| !d.is_empty() && d.bytes().all(|b| b.is_ascii_digit());
    if let Some((b, e)) = t.split_once('^') {
        if !digits(b) || !digits(e) {
            return Err(bad());
        }
        let (b, e): (u64, u32) = (b.parse().map_err(|_| bad())?, e.parse().map_err(|_| bad())?);
        return b.checked_pow(e).ok_or_else(|| format!("`{s}` is more than 2^64 - 1"));
    }
    let (mantissa, exponent) = t.split_once(['e', 'E']).unwrap_or((&t, "0"));
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let exponent = exponent.strip_prefix('+').unwrap_or(exponent);
    let (negative, magnitude) = match exponent.strip_prefix('-') {
        Some(m) => (true, m),
        None => (false, exponent),
    };
    if !(digits(whole) || digits(fraction))
        || !(whole.is_empty() || digits(whole))
        || !(fraction.is_empty() || digits(fraction))
        || !digits(magnitude)
    {
        return Err(bad());
    }
    // The value is `whole.fraction` digits times 10^(exponent - fraction digits), exactly.
    let e: i64 = magnitude.parse::<i64>().map_err(|_| bad())? * if negative { -1 } else { 1 };
    let mut value: u128 = 0;
    for b in whole.bytes().chain(fraction.bytes()) {
        value = value.checked_mul(10).and_then(|v| v.checked_add((b - b'0') as u128)).ok_or_else(bad)?;
    }
    let mut shift = e - fraction.len() as i64;
    while shift < 0 && value != 0 {
        if !value.is_multiple_of(10) {
            return Err(format!("`{s}` is not a whole number"));
        }
        value /= 10;
        shift += 1;
    }
    for _ in 0..shift {
        if value == 0 {
            break;
        }
        value = value
            .checked_mul(10)
            .filter(|&v| v <= u64::MAX as u128)
            .ok_or_else(|| format!("`{s}` is more than 2^64 - 1"))?;
    }
    u64::try_from(value).map_err(|_| format!("`{s}` is more than 2^64 - 1"))
}

/// A clap parser of counts from `lo` to `hi` (written as [`parse_count`] takes them), its
/// refusals said in words: `must be at least 1`.
pub fn count_in<T: TryFrom<u64> + Clone + Send + Sync + 'static>(
    lo: u64,
    hi: u64,
) -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync + 'static {
    move |s| {
        let v = parse_count(s)?;
        if v < lo {
            return Err(format!("must be at least {lo}"));
        }
        if v > hi {
            return Err(format!("must be at most {hi}"));
        }
        T::try_from(v).map_err(|_| format!("must be at most {hi}"))
    }
}

/// Parses a size in bytes: a count as [`parse_count`] takes it, optionally followed by a unit
/// (`KiB`, `MiB`, `GiB`, `TiB` in powers of 1024; `kB`, `MB`, `GB`, `TB` in powers of 1000; `B`).
pub fn parse_bytes(s: &str) -> Result<u64, String> {
    let t = s.trim();
    let split = t.find(|c: char| c.is_ascii_alphabetic() && c != 'e' && c != 'E').unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    let scale: u64 = match unit.trim() {
        "" | "B" => 1,
        "KiB" => 1 << 10,
        "MiB" => 1 << 20,
        "GiB" => 1 << 30,
        "TiB" => 1 << 40,
        "kB" | "KB" => 1_000,
        "MB" => 1_000_000,
        "GB" => 1_000_000_000,
        "TB" => 1_000_000_000_000,
        u => return Err(format!("`{u}` is not a unit of bytes (KiB, MiB, GiB, TiB, kB, MB, GB, TB)")),
    };
    let v = parse_count(number).map_err(|_| format!("`{s}` is not a size (examples: 2GiB, 512MiB, 1e9)"))?;
    v.checked_mul(scale).filter(|&b| b > 0).ok_or_else(|| format!("`{s}` must be between 1 byte and 2^64 - 1"))
}

/// A count of at least one: the size of every run.
pub fn positive(s: &str) -> Result<u64, String> {
    count_in::<u64>(1, u64::MAX)(s)
}

/// Parses a size list: a range of powers of two `2^a..2^b` (every `step`-th exponent) or counts
/// separated by commas (`1e6,2^20`).
pub fn parse_sizes(s: &str, step: u32) -> Result<Vec<u64>, Error> {
    if let Some((a, b)) = s.split_once("..") {
        let exp = |t: &str| t.trim().strip_prefix("2^").and_then(|e| e.parse::<u32>().ok());
        let (Some(a), Some(b)) = (exp(a), exp(b)) else {
            return Err(Error::invalid(format!("--sizes {s}: a range is written 2^a..2^b")));
        };
        if a > b || b > 40 || step == 0 {
            return Err(Error::invalid(format!("--sizes {s}: need a <= b <= 40 and --step >= 1")));
        }
        return Ok((a..=b).step_by(step as usize).map(|e| 1u64 << e).collect());
    }
    s.split(',').map(|c| positive(c).map_err(|e| Error::invalid(format!("--sizes {s}: `{}` {e}", c.trim())))).collect()
}

/// Parses `lo:hi` with lo < hi, both finite.
pub fn parse_range(s: &str) -> Result<(f64, f64), String> {
    let bad = || format!("`{s}` is not a range lo:hi with lo < hi (example: -1:1)");
    let (a, b) = s.split_once(':').ok_or_else(bad)?;
    let (a, b): (f64, f64) = (a.trim().parse().map_err(|_| bad())?, b.trim().parse().map_err(|_| bad())?);
    if a.is_finite() && b.is_finite() && a < b {
        Ok((a, b))
    } else {
        Err(bad())
    }
}

/// `n` as an index of this machine's memory.
pub fn host_len(n: u64, what: &str) -> Result<usize, Error> {
    usize::try_from(n).map_err(|_| Error::invalid(format!("{what} does not fit this machine's memory")))
}

/// Options of every GPU subcommand.
#[derive(Args, Clone, Debug)]
pub struct Global {
    /// The CUDA device.
    #[arg(long, global = true, default_value_t = 0)]
    pub device: usize,
    /// A tuning choice, `key=value` (repeatable; `--tune help` lists the keys).
    #[arg(long = "tune", global = true, value_name = "KEY=VALUE")]
    pub tune: Vec<String>,
    /// Kernels from this PTX module instead of the embedded ones (kernel development).
    #[arg(long, global = true, value_name = "FILE")]
    pub ptx: Option<PathBuf>,
    /// Append the run's timing as a CSV row to this file (for reports; see `report`).
    #[arg(long, global = true, value_name = "FILE")]
    pub record: Option<PathBuf>,
}

impl Global {
    /// The tuning these options ask for and the PTX text, checked (with the `--record` file)
    /// before any GPU is opened.
    pub fn resolve(&self) -> Result<(Tuning, Option<String>), Error> {
        if let Some(path) = &self.record {
            crate::io::check_appendable(path).map_err(|e| Error::invalid(format!("--record {e}")))?;
        }
        let mut tuning = *scan_abi::tuning::for_arch(scan_abi::tuning::DEFAULT_ARCH);
        gpu_scan::tuning::apply(&mut tuning, self.tune.iter().map(String::as_str))?;
        let ptx = self
            .ptx
            .as_ref()
            .map(|p| std::fs::read_to_string(p).map_err(|e| Error::invalid(format!("--ptx {}: {e}", p.display()))))
            .transpose()?;
        Ok((tuning, ptx))
    }

    /// Whether `--tune help` asks for the list of keys.
    pub fn tune_help(&self) -> bool {
        self.tune.iter().any(|t| t == "help")
    }
}

/// The keys `--tune` takes, a line each.
pub fn tune_keys() -> String {
    let keys: Vec<String> = gpu_scan::tuning::KEYS.iter().map(|(k, h)| format!("  {k:<30} {h}\n")).collect();
    format!("--tune takes key=value (repeatable); the keys:\n{}", keys.concat())
}

/// The named input and output of a command that reads and writes files.
#[derive(Args, Clone, Debug)]
pub struct Files {
    /// The input: a .npy file (its dtype is the element type) or raw little-endian binary (with
    /// --type). Without it the input is generated from --seed.
    #[arg(long, value_name = "FILE")]
    pub input: Option<PathBuf>,
    #[command(flatten)]
    pub out: Outputs,
}

/// The output of a command that writes its checked result, whatever its inputs.
#[derive(Args, Clone, Debug)]
pub struct Outputs {
    /// Write the result here (.npy, or raw binary for any other extension) once it is checked
    /// against the CPU: atomically, never a partial file.
    #[arg(long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Replace existing output files.
    #[arg(long)]
    pub force: bool,
}

impl Outputs {
    /// An error unless `--output` and every one of `more` (flag, path) may be written, each to a
    /// different file.
    pub fn check(&self, more: &[(&str, Option<&std::path::Path>)]) -> Result<(), Error> {
        let all: Vec<(&str, &std::path::Path)> = [("--output", self.output.as_deref())]
            .iter()
            .chain(more)
            .filter_map(|&(flag, p)| p.map(|p| (flag, p)))
            .collect();
        for (i, &(flag, path)) in all.iter().enumerate() {
            crate::io::check_writable(path, self.force)?;
            if let Some(&(other, _)) = all[..i].iter().find(|(_, p)| *p == path) {
                return Err(Error::invalid(format!("{flag} and {other} name the same file {}", path.display())));
            }
        }
        Ok(())
    }
}

impl Files {
    /// The element type: `--input`'s (one that `command` is built for), else `requested` or
    /// `default`.
    pub fn elem_type(
        &self,
        requested: Option<ElemType>,
        default: ElemType,
        allowed: &[ElemType],
        command: &str,
    ) -> Result<ElemType, Error> {
        match &self.input {
            Some(path) => crate::io::input_of(path, requested, allowed, command, 1),
            None => Ok(requested.unwrap_or(default)),
        }
    }

    /// The number of elements: `--input`'s, which must agree with `n` when given; else `n`.
    pub fn len(&self, ty: ElemType, n: Option<u64>) -> Result<u64, Error> {
        match (&self.input, n) {
            (Some(path), n) => {
                let len = crate::io::input_len(path, ty)?;
                match n {
                    Some(n) if n != len => Err(Error::invalid(format!("N is {n} but --input has {len} values"))),
                    _ => Ok(len),
                }
            }
            (None, Some(n)) => Ok(n),
            (None, None) => Err(Error::invalid("give N, the number of elements, or --input")),
        }
    }
}

/// How a subcommand runs its experiment: the seed of generated inputs and the timed runs.
#[derive(Args, Clone, Copy, Debug)]
pub struct Runs {
    /// Seed of the generated input.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Timed runs (the median is reported), after one warm-up run.
    #[arg(long, default_value_t = 20, value_parser = count_in::<u32>(1, u32::MAX as u64))]
    pub iters: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn byte_sizes_take_binary_and_decimal_units() {
        assert_eq!(parse_bytes("2GiB"), Ok(2 << 30));
        assert_eq!(parse_bytes("64 MiB"), Ok(64 << 20));
        assert_eq!(parse_bytes("1.5e3"), Ok(1500));
        assert_eq!(parse_bytes("1e9B"), Ok(1_000_000_000));
        assert_eq!(parse_bytes("3GB"), Ok(3_000_000_000));
        assert_eq!(parse_bytes("2^20"), Ok(1 << 20));
        for bad in ["", "GiB", "2 parsecs", "0", "-1MiB", "16777216TiB"] {
            assert!(parse_bytes(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn counts() {
        assert_eq!(parse_count("100000000"), Ok(100_000_000));
        assert_eq!(parse_count("1e8"), Ok(100_000_000));
        assert_eq!(parse_count("2^28"), Ok(1 << 28));
        assert_eq!(parse_count("1_000"), Ok(1000));
        assert_eq!(parse_count("1.5e3"), Ok(1500));
        assert_eq!(parse_count("2.5E1"), Ok(25));
        assert_eq!(parse_count("1e+2"), Ok(100));
        assert_eq!(parse_count("12000e-3"), Ok(12));
        assert_eq!(parse_count("1.8446744073709551615e19"), Ok(u64::MAX));
        assert_eq!(parse_count("0e400"), Ok(0));
        assert_eq!(parse_count("0e-4000000000000"), Ok(0));
        assert_eq!(parse_count("1.5e0"), Err("`1.5e0` is not a whole number".into()));
        assert_eq!(parse_count("1.25e1"), Err("`1.25e1` is not a whole number".into()));
        assert_eq!(parse_count("2^64"), Err("`2^64` is more than 2^64 - 1".into()));
        assert_eq!(parse_count("1e20"), Err("`1e20` is more than 2^64 - 1".into()));
        for bad in ["abc", "", "-1", "1e", "e5", "1.2.3", "2^", "^3", "2^-1", "1e1.5", "0x10", "1 000", "."] {
            assert!(parse_count(bad).unwrap_err().contains("is not a count"), "{bad}");
        }
    }

    #[test]
    fn ranges_are_said_in_words() {
        assert_eq!(positive("0"), Err("must be at least 1".into()));
        assert_eq!(positive("3"), Ok(3));
        assert_eq!(count_in::<u32>(1, 1024)("2^11"), Err("must be at most 1024".into()));
        assert_eq!(count_in::<u32>(1, u32::MAX as u64)("5e9"), Err("must be at most 4294967295".into()));
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_sizes("2^10..2^16", 2).unwrap(), vec![1 << 10, 1 << 12, 1 << 14, 1 << 16]);
        assert_eq!(parse_sizes("1e3,2^4", 1).unwrap(), vec![1000, 16]);
        assert!(parse_sizes("2^20..2^10", 1).is_err());
        assert!(parse_sizes("5..9", 1).is_err());
        assert!(parse_sizes("1e3,0", 1).unwrap_err().to_string().contains("`0` must be at least 1"));
    }

    #[test]
    fn value_enums_use_the_library_names() {
        let names = |v: &[Operator]| {
            v.iter().map(|o| o.to_possible_value().unwrap().get_name().to_string()).collect::<Vec<_>>()
        };
        assert_eq!(names(Operator::value_variants()), Op::ALL.map(|o| o.name().to_string()));
        assert_eq!(Type::from_str("f64", false).unwrap(), Type(ElemType::F64));
        assert_eq!(Algo::from_str("blelloch", false).unwrap(), Algo::Hierarchical(Some(BlockAlgo::Blelloch)));
        assert_eq!(
            BatchedKernelArg::from_str("bulk-tiles", false).unwrap(),
            BatchedKernelArg(BatchedKernel::BulkTiles)
        );
    }

    #[test]
    fn each_command_offers_the_types_and_operators_its_kernels_are_built_for() {
        let types = |v: Vec<ElemType>| v.into_iter().map(ElemType::name).collect::<Vec<_>>().join(" ");
        assert_eq!(types(types_of(Family::SinglePass)), "u8 u16 u32 i32 u64 i64 f32 f64");
        assert_eq!(types(types_of(Family::SortPass)), "u32 i32 u64 i64 f32 f64");
        assert_eq!(types(types_of(Family::Segmented)), "u32 i32 u64 i64 f32 f64");
        assert_eq!(types(types_of(Family::Recurrence)), "f32 f64");
        let ops = |v: Vec<Op>| v.into_iter().map(Op::name).collect::<Vec<_>>().join(" ");
        assert_eq!(ops(ops_of(Family::Segmented)), "add mul min max and or xor");
        assert_eq!(ops(ops_of(Family::BatchedRows)), "add mul min max");
        assert_eq!(SegmentedType::value_variants().len(), 6);
        assert!(SortType::from_str("u8", false).is_err());
        assert!(BatchedOp::from_str("xor", false).is_err());
        assert_eq!(describe_type(ElemType::I64), "64-bit signed integer");
        assert_eq!(describe_type(ElemType::U8), "8-bit unsigned integer");
        assert_eq!(describe_type(ElemType::F32), "32-bit float");
    }
}
