//! Planning a segmented scan: the single-pass tiles (`gpu/src/kernels/segmented.rs`), whose
//! look-back carries (head, value) pairs, so a segment's start cuts the chain; or, for large
//! inputs, the pipelined kernel (`segmented_pipelined.rs`), which stages the head flags or the
//! keys beside the values. A scan by key whose keys no pipelined kernel takes (or that runs on
//! the tiles) marks the heads first.

use super::{per_tile, scan_flags, Grid, Launch, TileState};
use crate::error::{Error, Result};
use crate::options::SegmentedKernel;
use scan_abi::kernel::Segments;
use scan_abi::tuning::Tuning;
use scan_abi::{smem, ElemType, Family, Kernel, Op};

/// Where a segmented scan's segments start.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Marks {
    /// At every multiple of a fixed length.
    Fixed,
    /// Where a head flag is set.
    Flags,
    /// Where a key of this type differs from the one before.
    Keys(ElemType),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SegmentedPlan {
    /// For keys the scan does not read itself: the helper that marks their heads first, into
    /// `n` bytes of scratch.
    pub key_heads: Option<Launch>,
    pub launch: Launch,
    pub state: TileState,
    pub flags: u32,
    /// The pipelined kernel's look-back backoff and stages (`None`: the tiles).
    pub pipelined: Option<(u32, u32)>,
}

impl SegmentedPlan {
    /// Bytes of temporary storage: the tile state, and the marked heads.
    pub fn temp_bytes(&self, n: u64) -> u64 {
        self.state.bytes() + if self.key_heads.is_some() { n } else { 0 }
    }
}

/// Plans the segmented scan of `n` elements of `ty` with `op`, its segments as `marks` says.
pub fn plan(
    t: &Tuning,
    ty: ElemType,
    op: Op,
    n: u64,
    exclusive: bool,
    kernel: SegmentedKernel,
    marks: Marks,
) -> Result<SegmentedPlan> {
    supported(ty, op)?;
    let key_heads = match marks {
        Marks::Keys(k) => Some(key_heads(t, k, n)?),
        _ => None,
    };
    let size = ty.size();
    let pipelined = match kernel {
        SegmentedKernel::Pipelined if marks == Marks::Fixed => {
            return Err(Error::invalid(
                "the pipelined segmented scan takes head flags or keys, not segments of a fixed length",
            ))
        }
        SegmentedKernel::Pipelined => true,
        SegmentedKernel::Auto => {
            marks != Marks::Fixed && n.saturating_mul(size as u64) >= t.choices.segmented_pipelined_min_bytes
        }
        SegmentedKernel::Tiles => false,
    };
    let flags = scan_flags(exclusive, false);
    if pipelined {
        // Keys of 4 and 8 bytes are staged themselves; others become head flags first.
        let (segments, key_heads) = match marks {
            Marks::Keys(k) => Segments::of_keys(k).map_or((Segments::Flags, key_heads), |s| (s, None)),
            _ => (Segments::Flags, None),
        };
        let mut p = t.shapes.segmented_pipeline.at(size);
        p.stages = t.choices.pipeline_stages.unwrap_or(p.stages);
        let tiles = n.div_ceil(p.tile() as u64);
        let launch = Launch {
            kernel: Kernel::new(Family::SegmentedPipelined(segments), ty, op),
            grid: Grid::Persistent { tiles, per_sm: t.choices.pipeline_blocks_per_sm },
            threads: p.threads(),
            smem: smem::segmented_pipelined(p, size, segments.size()),
        };
        let state = TileState::persistent(tiles, size)?;
        return Ok(SegmentedPlan {
            key_heads,
            launch,
            state,
            flags,
            pipelined: Some((t.choices.lookback_backoff_ns, p.stages)),
        });
    }
    let tile = t.shapes.single_pass.at(size);
    let tiles = n.div_ceil(tile.tile() as u64);
    let launch =
        per_tile(Kernel::new(Family::Segmented, ty, op), tiles, tile.threads, smem::segmented(&t.shapes, size));
    Ok(SegmentedPlan { key_heads, launch, state: TileState::per_tile(tiles, size)?, flags, pipelined: None })
}

/// Refuses a type and operator the segmented kernels are not built for, naming those they are.
fn supported(ty: ElemType, op: Op) -> Result<()> {
    let built = |o: Op| Family::Segmented.built_for(ty, Some(o));
    if built(op) {
        return Ok(());
    }
    let ops: Vec<&str> = Op::ALL.iter().copied().filter(|&o| built(o)).map(Op::name).collect();
    let offer = match ops.is_empty() {
        true => "32- and 64-bit types alone".to_string(),
        false => format!("{} on {}", ops.join(", "), ty.name()),
    };
    Err(Error::invalid(format!("segmented scans are built for {offer}, not {} on {}", op.name(), ty.name())))
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
    fn segmented_scans_exist_for_every_operator_of_wide_types_but_the_affine_maps() {
        let t = for_arch(90);
        let at = |ty, op, n, kernel, marks| plan(t, ty, op, n, false, kernel, marks);
        assert!(plan(t, ElemType::F64, Op::Max, 10, true, SegmentedKernel::Auto, Marks::Flags).is_ok());
        for kernel in [SegmentedKernel::Tiles, SegmentedKernel::Pipelined] {
            for ty in [ElemType::U32, ElemType::I32, ElemType::U64, ElemType::I64] {
                for op in [Op::And, Op::Or, Op::Xor] {
                    let p = at(ty, op, 100_000, kernel, Marks::Keys(ElemType::U32)).unwrap();
                    assert!(p.launch.kernel.family.built_for(ty, Some(op)), "{ty:?} {op:?} {kernel:?}");
                }
            }
        }
        let e = at(ElemType::U64, Op::Affine, 10, SegmentedKernel::Auto, Marks::Flags).unwrap_err().to_string();
        assert!(e.contains("built for add, mul, min, max, and, or, xor on u64, not affine on u64"), "{e}");
        let e = at(ElemType::U8, Op::Add, 10, SegmentedKernel::Auto, Marks::Flags).unwrap_err().to_string();
        assert!(e.contains("32- and 64-bit types alone, not add on u8"), "{e}");
        let p = at(ElemType::U32, Op::Add, 100_000, SegmentedKernel::Auto, Marks::Flags).unwrap();
        assert_eq!(p.state.slots, 100_000u64.div_ceil(t.shapes.single_pass.at(4).tile() as u64));
    }

    #[test]
    fn large_inputs_take_the_pipelined_kernel_which_stages_keys_of_4_and_8_bytes_itself() {
        let t = for_arch(90);
        let big = t.choices.segmented_pipelined_min_bytes / 4;
        let at = |n, kernel, marks| plan(t, ElemType::U32, Op::Add, n, false, kernel, marks).unwrap();
        let family = |p: SegmentedPlan| p.launch.kernel.family;
        assert_eq!(family(at(big - 1, SegmentedKernel::Auto, Marks::Flags)), Family::Segmented);
        assert_eq!(family(at(big, SegmentedKernel::Auto, Marks::Flags)), Family::SegmentedPipelined(Segments::Flags));
        assert_eq!(family(at(big, SegmentedKernel::Auto, Marks::Fixed)), Family::Segmented, "no pipelined fixed rows");
        let keyed = at(big, SegmentedKernel::Auto, Marks::Keys(ElemType::I64));
        assert_eq!((family(keyed), keyed.key_heads), (Family::SegmentedPipelined(Segments::Keys64), None));
        let narrow = at(10, SegmentedKernel::Pipelined, Marks::Keys(ElemType::U16));
        assert_eq!(family(narrow), Family::SegmentedPipelined(Segments::Flags));
        assert!(narrow.key_heads.is_some() && narrow.temp_bytes(10) == narrow.state.bytes() + 10);
        let tiles = at(big, SegmentedKernel::Tiles, Marks::Keys(ElemType::U32));
        assert!(family(tiles) == Family::Segmented && tiles.key_heads.is_some());
        let e = plan(t, ElemType::U32, Op::Add, 10, false, SegmentedKernel::Pipelined, Marks::Fixed).unwrap_err();
        assert!(e.to_string().contains("fixed length"), "{e}");
    }
}
