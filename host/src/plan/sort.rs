//! Planning an LSD radix sort (`gpu/src/kernels/onesweep.rs`): one read of the keys counts every
//! pass's digits, then one launch per 8 bits of key moves the keys once, its digit offsets from a
//! look-back over the tiles' digit counts.

use super::{per_tile, Grid, Launch, TileState};
use crate::error::{Error, Result};
use scan_abi::kernel::WIDE_TYPES;
use scan_abi::partition::RADIX_BITS;
use scan_abi::tuning::Tuning;
use scan_abi::{smem, ElemType, Family, Kernel};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SortPlan {
    /// Every pass's digit counts, by a persistent grid.
    pub counting: Launch,
    /// One pass (the same launch for each).
    pub pass: Launch,
    pub passes: u32,
    /// Each pass's tile state: a running count per tile and digit.
    pub state: TileState,
    /// A descending sort's key mapping, before the passes and after them.
    pub flip: Option<Launch>,
}

/// The digits of one pass.
pub const DIGITS: u64 = 1 << RADIX_BITS;

/// An error unless `n` elements fit the 32-bit positions of sorts and permutations.
pub fn check_len(n: u64) -> Result<()> {
    if n >= u32::MAX as u64 {
        return Err(Error::out_of_range(
            "the elements of a sort or histogram permutation",
            n,
            "fewer than 2^32 - 1 (their positions are 32-bit)",
        ));
    }
    Ok(())
}

/// Plans the sort of `n` keys of `ty`, with u32 values when `values`, descending when
/// `descending`.
pub fn plan(t: &Tuning, ty: ElemType, n: u64, values: bool, descending: bool) -> Result<SortPlan> {
    if !WIDE_TYPES.contains(&ty) {
        return Err(Error::invalid(format!(
            "sort keys of type {} are not supported (u32, i32, u64, i64, f32, f64)",
            ty.name()
        )));
    }
    check_len(n)?;
    let size = ty.size();
    let counts = t.shapes.sort_counts.at(size);
    let counting = Launch {
        kernel: Kernel::typed(Family::SortCounts, ty),
        grid: Grid::Persistent { tiles: n.div_ceil(counts.tile() as u64), per_sm: None },
        threads: counts.threads,
        smem: smem::sort_counts(size),
    };
    let tile = t.shapes.sort_pass(size, values);
    let tiles = n.div_ceil(tile.tile() as u64);
    let family = if values { Family::SortPassValues } else { Family::SortPass };
    let pass = per_tile(Kernel::typed(family, ty), tiles, tile.threads, smem::sort_pass(&t.shapes, size, values));
    let state = TileState { slots: tiles * DIGITS, value_bytes: 4, claims: super::Claims::Tiles(tiles) }.checked()?;
    let helper = t.shapes.helper_threads;
    let flip = descending.then(|| per_tile(Kernel::typed(Family::SortFlip, ty), n.div_ceil(helper as u64), helper, 0));
    Ok(SortPlan { counting, pass, passes: 8 * size as u32 / RADIX_BITS, state, flip })
}

#[cfg(test)]
mod tests {
    use super::*;
    use scan_abi::tuning::for_arch;

    #[test]
    fn passes_cover_every_key_bit_and_status_words_every_digit_of_every_tile() {
        let t = for_arch(90);
        let p = plan(t, ElemType::U64, 1_000_000, true, false).unwrap();
        assert_eq!(p.flip, None);
        assert_eq!(p.passes, 8);
        assert_eq!(p.pass.kernel, Kernel::typed(Family::SortPassValues, ElemType::U64));
        let tiles = 1_000_000u64.div_ceil(t.shapes.sort_pass(8, true).tile() as u64);
        assert_eq!(p.state.slots, tiles * 256);
        assert_eq!(plan(t, ElemType::F32, 10, false, false).unwrap().passes, 4);
        assert!(plan(t, ElemType::U8, 10, false, false).unwrap_err().to_string().contains("not supported"));
        assert!(plan(t, ElemType::U32, u32::MAX as u64, false, false).unwrap_err().to_string().contains("2^32"));
        let flip = plan(t, ElemType::I32, 1000, false, true).unwrap().flip.unwrap();
        assert_eq!(flip.kernel, Kernel::typed(Family::SortFlip, ElemType::I32));
    }
}
