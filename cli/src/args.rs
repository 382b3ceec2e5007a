//! What every subcommand parses alike: counts (`1e8`, `2^28`), sizes, ranges, the element types,
//! operators, algorithms and kernels as clap value enums (named by the library), and the options
//! shared by every GPU subcommand.

use clap::builder::PossibleValue;
use clap::{Args, ValueEnum};
use gpu_scan::{
    Algorithm, Axis, BatchedKernel, BlockAlgo, CompactKernel, ElemType, Error, Op, Propagation, ScanKernel,
    StatusOrdering, Tuning,
};
use std::path::PathBuf;
use std::sync::OnceLock;

/// A clap value enum over a library enum: its values are the library's names, listed once there.
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
                let help: Option<&'static str> = $help(self.0);
                Some(PossibleValue::new($label(self.0)).help(help.unwrap_or_default()))
            }
        }
    };
}

value_enum!(
    /// An element type.
    Type(ElemType): ElemType::ALL, ElemType::name, |_| None
);
value_enum!(
    /// A scan operator.
    Operator(Op): Op::ALL, Op::name, |o: Op| Some(o.describe())
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
    Kernel(ScanKernel): ScanKernel::ALL, ScanKernel::name, |_| None
);
value_enum!(
    /// The batched-scan kernel.
    BatchedKernelArg(BatchedKernel): BatchedKernel::ALL, BatchedKernel::name, |_| None
);
value_enum!(
    /// The compaction kernel.
    CompactKernelArg(CompactKernel): CompactKernel::ALL, CompactKernel::name, |_| None
);
value_enum!(
    /// How the hierarchical strategy combines tile results.
    PropagationArg(Propagation): Propagation::ALL, Propagation::name, |p| Some(match p {
        Propagation::ReduceThenScan => "reduce tiles, scan the totals, rescan tiles from their offsets (3n moves)",
        Propagation::ScanThenAdd => "the lecture's form: scan tiles, scan the totals, add offsets (4n moves)",
        _ => "",
    })
);
value_enum!(
    /// Memory ordering of the single-pass tile-status words.
    OrderingArg(StatusOrdering): StatusOrdering::ALL, StatusOrdering::name, |_| None
);

/// A float type (the recurrence and the error study).
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Float {
    F32,
    F64,
}

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

/// Parses `100000000`, `1e8`, `2^28` or `1_000_000`.
pub fn parse_count(s: &str) -> Result<u64, String> {
    let t = s.trim().replace('_', "");
    let bad = || format!("`{s}` is not a count (examples: 100000000, 1e8, 2^28)");
    if let Some((b, e)) = t.split_once('^') {
        let (b, e): (u64, u32) = (b.parse().map_err(|_| bad())?, e.parse().map_err(|_| bad())?);
        return b.checked_pow(e).ok_or_else(bad);
    }
    if let Some((m, e)) = t.split_once(['e', 'E']) {
        let (m, e): (u64, u32) = (m.parse().map_err(|_| bad())?, e.parse().map_err(|_| bad())?);
        return 10u64.checked_pow(e).and_then(|p| p.checked_mul(m)).ok_or_else(bad);
    }
    t.parse().map_err(|_| bad())
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
    s.split(',').map(|c| parse_count(c).map_err(Error::invalid)).collect()
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
    /// The tuning these options ask for and the PTX text, checked before any GPU is opened.
    pub fn resolve(&self) -> Result<(Tuning, Option<String>), Error> {
        if self.tune.iter().any(|t| t == "help") {
            let keys: Vec<String> = gpu_scan::tuning::KEYS.iter().map(|(k, h)| format!("  {k:<30} {h}")).collect();
            return Err(Error::invalid(format!("--tune takes key=value; the keys:\n{}", keys.join("\n"))));
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
}

/// How a subcommand runs its experiment: the seed of generated inputs and the timed runs.
#[derive(Args, Clone, Copy, Debug)]
pub struct Runs {
    /// Seed of the generated input.
    #[arg(long, default_value_t = 42)]
    pub seed: u64,
    /// Timed runs (the median is reported), after one warm-up run.
    #[arg(long, default_value_t = 20, value_parser = clap::value_parser!(u32).range(1..))]
    pub iters: u32,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts() {
        assert_eq!(parse_count("100000000"), Ok(100_000_000));
        assert_eq!(parse_count("1e8"), Ok(100_000_000));
        assert_eq!(parse_count("2^28"), Ok(1 << 28));
        assert_eq!(parse_count("1_000"), Ok(1000));
        assert!(parse_count("abc").is_err());
        assert!(parse_count("2^99").is_err());
    }

    #[test]
    fn sizes() {
        assert_eq!(parse_sizes("2^10..2^16", 2).unwrap(), vec![1 << 10, 1 << 12, 1 << 14, 1 << 16]);
        assert_eq!(parse_sizes("1e3,2^4", 1).unwrap(), vec![1000, 16]);
        assert!(parse_sizes("2^20..2^10", 1).is_err());
        assert!(parse_sizes("5..9", 1).is_err());
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
}
