//! Planning a stable partition by a small digit (`gpu/src/kernels/partition.rs`), which the
//! histogram's counting sort is: count digits per tile, scan the digit-major count matrix with
//! our scan, scatter. And COO <-> CSR, which are a count or a head marking followed by a scan.

use super::scan::{self, ScanPlan, ScanRequest};
use super::{check_blocks, per_tile, Grid, Launch};
use crate::error::{Error, Result};
use scan_abi::partition::{Digit, MAX_BINS, MODE_BINS, MODE_RADIX};
use scan_abi::tuning::Tuning;
use scan_abi::{smem, ElemType, Family, Kernel, Op};

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PartitionPlan {
    pub count: Launch,
    /// The exclusive scan of the `entries` digit counts (digit-major).
    pub scan: ScanPlan,
    pub scatter: Launch,
    pub entries: u64,
    pub tiles: u64,
}

/// Plans one partition pass of `n` elements of `ty` by `digit`: a radix digit, or 1 to
/// [`MAX_BINS`] bins.
pub fn plan(t: &Tuning, ty: ElemType, n: u64, digit: &Digit) -> Result<PartitionPlan> {
    match digit.mode {
        MODE_RADIX => {}
        MODE_BINS if (1..=MAX_BINS).contains(&digit.bins) => {}
        MODE_BINS => {
            return Err(Error::out_of_range("the bins of a histogram", digit.bins, format!("1 to {MAX_BINS}")))
        }
        mode => return Err(Error::out_of_range("a partition's digit mode", mode, "MODE_RADIX or MODE_BINS")),
    }
    let tile = t.shapes.partition;
    let tiles = n.div_ceil(tile.tile() as u64);
    check_blocks("the tiles of a partition pass", tiles)?;
    let entries = tiles
        .checked_mul(digit.count() as u64)
        .ok_or_else(|| Error::out_of_range(format!("the digit counts of {n} elements"), "beyond 2^64", "below 2^64"))?;
    let count =
        per_tile(Kernel::typed(Family::PartitionCount, ty), tiles, tile.threads, smem::partition_count(digit.count()));
    let scatter_smem = smem::partition_scatter(&t.shapes, digit.count());
    let scatter = per_tile(Kernel::typed(Family::PartitionScatter, ty), tiles, tile.threads, scatter_smem);
    let scan = scan::plan(t, &ScanRequest { exclusive: true, ..ScanRequest::new(ElemType::U32, Op::Add, entries) })?;
    Ok(PartitionPlan { count, scan, scatter, entries, tiles })
}

/// The histogram's bin counts alone (`digit` of 1 to [`MAX_BINS`] bins) of `n` elements of `ty`:
/// one persistent launch over the partition pass's tiles.
pub fn histogram_counts(t: &Tuning, ty: ElemType, n: u64, digit: &Digit) -> Result<Launch> {
    let family = Family::HistogramCounts;
    if !family.built_for(ty, None) {
        return Err(Error::UnsupportedType {
            function: "histogram_counts",
            ty,
            supported: "u32, i32, u64, i64, f32, f64".into(),
        });
    }
    if digit.mode != MODE_BINS || !(1..=MAX_BINS).contains(&digit.bins) {
        return Err(Error::out_of_range("the bins of a histogram", digit.bins, format!("1 to {MAX_BINS}")));
    }
    let tile = t.shapes.partition;
    Ok(Launch {
        kernel: Kernel::typed(family, ty),
        grid: Grid::Persistent { tiles: n.div_ceil(tile.tile() as u64), per_sm: None },
        threads: tile.threads,
        smem: smem::partition_count(digit.count()),
    })
}

/// A helper kernel over `items` items, one thread each (CSR counts and heads).
pub fn helper(t: &Tuning, family: Family, items: u64) -> Launch {
    let threads = t.shapes.helper_threads;
    per_tile(Kernel::typed(family, ElemType::U32), items.div_ceil(threads as u64), threads, 0)
}

/// The `u32` add scan of `n` elements (CSR offsets and row indices).
pub fn count_scan(t: &Tuning, n: u64, exclusive: bool) -> Result<ScanPlan> {
    scan::plan(t, &ScanRequest { exclusive, ..ScanRequest::new(ElemType::U32, Op::Add, n) })
}

#[cfg(test)]
mod tests {
    use super::*;
    use scan_abi::tuning::for_arch;

    #[test]
    fn the_count_matrix_has_a_row_per_digit_and_a_column_per_tile() {
        let t = for_arch(90);
        let digit = Digit::bins(1000, 0.0, 1.0);
        let p = plan(t, ElemType::F32, 100_000, &digit).unwrap();
        assert_eq!(p.tiles, 100_000u64.div_ceil(t.shapes.partition.tile() as u64));
        assert_eq!(p.entries, p.tiles * 1001);
        assert_eq!(p.scatter.smem, smem::partition_scatter(&t.shapes, 1001));
        assert!(matches!(p.scan, ScanPlan::SinglePass(_)));
    }

    #[test]
    fn histogram_counts_take_one_persistent_launch_of_bins_only() {
        let t = for_arch(90);
        let l = histogram_counts(t, ElemType::F64, 100_000, &Digit::bins(7, -1.0, 1.0)).unwrap();
        assert_eq!(l.kernel.to_string(), "histogram_counts_f64");
        let tiles = 100_000u64.div_ceil(t.shapes.partition.tile() as u64);
        assert_eq!(l.grid, Grid::Persistent { tiles, per_sm: None });
        assert_eq!(l.smem, smem::partition_count(8));
        assert!(histogram_counts(t, ElemType::F32, 10, &Digit::bins(MAX_BINS + 1, 0.0, 1.0)).is_err());
        assert!(histogram_counts(t, ElemType::U32, 10, &Digit::radix(0)).is_err());
        let e = histogram_counts(t, ElemType::U8, 10, &Digit::bins(4, 0.0, 1.0)).unwrap_err();
        assert!(e.to_string().contains("histogram_counts is not available for u8"), "{e}");
    }
}
