//! Planning a segmented scan (`gpu/src/kernels/segmented.rs`): the single-pass tiles, whose
//! look-back carries (head, value) pairs, so a segment's start cuts the chain.

use super::batched::supported;
use super::{per_tile, scan_flags, Launch, TileState};
use crate::error::{Error, Result};
use scan_abi::tuning::Tuning;
use scan_abi::{smem, ElemType, Family, Kernel, Op};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SegmentedPlan {
    pub launch: Launch,
    pub state: TileState,
    pub flags: u32,
}

/// Plans the segmented scan of `n` elements of `ty` with `op`.
pub fn plan(t: &Tuning, ty: ElemType, op: Op, n: u64, exclusive: bool) -> Result<SegmentedPlan> {
    supported(ty, op, "segmented")?;
    let size = ty.size();
    let tile = t.shapes.single_pass.at(size);
    let tiles = n.div_ceil(tile.tile() as u64);
    let launch =
        per_tile(Kernel::new(Family::Segmented, ty, op), tiles, tile.threads, smem::segmented(&t.shapes, size));
    Ok(SegmentedPlan { launch, state: TileState::per_tile(tiles, size)?, flags: scan_flags(exclusive, false) })
}

/// The helper that marks segment starts from offsets: one thread per offset.
pub fn heads(t: &Tuning, offsets: u64) -> Launch {
    let threads = t.shapes.helper_threads;
    per_tile(Kernel::typed(Family::SegmentedHeads, ElemType::U64), offsets.div_ceil(threads as u64), threads, 0)
}

/// The helper that marks where an integer key of `ty` changes: one thread per element.
pub fn key_heads(t: &Tuning, ty: ElemType, n: u64) -> Result<Launch> {
    let family = Family::SegmentedKeyHeads;
    if !family.built_for(ty, None) {
        return Err(Error::UnsupportedType {
            function: "scan_by_key's keys",
            ty,
            supported: "u8, u16, u32, i32, u64, i64".into(),
        });
    }
    let threads = t.shapes.helper_threads;
    Ok(per_tile(Kernel::typed(family, ty), n.div_ceil(threads as u64), threads, 0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use scan_abi::tuning::for_arch;

    #[test]
    fn segmented_scans_exist_for_arithmetic_on_wide_types_only() {
        let t = for_arch(90);
        assert!(plan(t, ElemType::F64, Op::Max, 10, true).is_ok());
        let e = plan(t, ElemType::U32, Op::Xor, 10, false).unwrap_err().to_string();
        assert!(e.contains("not xor on u32"), "{e}");
        assert!(plan(t, ElemType::U8, Op::Add, 10, false).is_err());
        let p = plan(t, ElemType::U32, Op::Add, 100_000, false).unwrap();
        assert_eq!(p.state.slots, 100_000u64.div_ceil(t.shapes.single_pass.at(4).tile() as u64));
    }
}
