//! Planning a stream compaction (`gpu/src/kernels/compact.rs`): one tile per block, or the
//! pipelined kernel's warp roles; either way the tiles publish `u64` counts.

use super::scan::{persistent_launch, SinglePass};
use super::{check_blocks, per_tile, Launch, TileState};
use crate::error::{Error, Result};
use crate::options::CompactKernel;
use scan_abi::kernel::predicate;
use scan_abi::tuning::Tuning;
use scan_abi::{smem, ElemType, Family, Kernel};

/// Bytes of the counts the tiles publish.
const COUNT_BYTES: usize = 8;

/// One compaction launch: the kernel, its tile state, and the stages of the pipelined form.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CompactPlan {
    pub launch: Launch,
    pub state: TileState,
    pub stages: Option<u32>,
}

/// Plans the compaction of `n` elements of `ty` kept by `pred` (`scan_abi::kernel::predicate`),
/// the input on a 16-byte boundary when `aligned`.
pub fn plan(t: &Tuning, ty: ElemType, n: u64, pred: u32, kernel: CompactKernel, aligned: bool) -> Result<CompactPlan> {
    let size = ty.size();
    let wide = matches!(size, 4 | 8);
    let pipelined = match kernel {
        CompactKernel::Pipelined if !wide => {
            return Err(Error::invalid(format!(
                "the pipelined compaction is built for 4- and 8-byte elements, not {}",
                ty.name()
            )))
        }
        CompactKernel::Pipelined if !aligned => {
            return Err(Error::invalid("the pipelined compaction needs its input on a 16-byte boundary"))
        }
        CompactKernel::Pipelined => true,
        CompactKernel::Auto => {
            // Flags are read twice, byte by byte, by the pipelined kernel: they keep the tiles.
            wide && aligned
                && pred != predicate::FLAGS
                && n.saturating_mul(size as u64) >= t.choices.compact_pipelined_min_bytes
        }
        CompactKernel::Tiles => false,
    };
    if pipelined {
        let p = t.shapes.compact_pipeline.at(size);
        let tiles = n.div_ceil(p.tile() as u64);
        let kernel = Kernel::typed(Family::CompactPipelined, ty);
        let SinglePass { launch, state, stages, .. } = persistent_launch(t, kernel, p, tiles, size, COUNT_BYTES, 0, 0)?;
        return Ok(CompactPlan { launch, state, stages });
    }
    let tile = t.shapes.compact.at(size);
    let tiles = n.div_ceil(tile.tile() as u64);
    let launch = per_tile(Kernel::typed(Family::Compact, ty), tiles, tile.threads, smem::compact(&t.shapes, size));
    Ok(CompactPlan { launch, state: TileState::per_tile(tiles, COUNT_BYTES)?, stages: None })
}

/// Plans the positions of the set flags among `n` (`positions_kernels!`), written as `ty`: the
/// compaction of bytes, in its tile shape.
pub fn positions(t: &Tuning, ty: ElemType, n: u64) -> Result<CompactPlan> {
    let tile = t.shapes.compact.at(1);
    let tiles = n.div_ceil(tile.tile() as u64);
    let launch = per_tile(Kernel::typed(Family::Positions, ty), tiles, tile.threads, smem::positions(&t.shapes));
    Ok(CompactPlan { launch, state: TileState::per_tile(tiles, COUNT_BYTES)?, stages: None })
}

/// Plans the flags of `n` elements of `ty` kept by a comparison (`kept_flags_<t>`): one thread
/// per element.
pub fn kept_flags(t: &Tuning, ty: ElemType, n: u64) -> Result<Launch> {
    let threads = t.shapes.helper_threads;
    let blocks = n.div_ceil(threads as u64);
    check_blocks("the blocks of the kept flags", blocks)?;
    Ok(per_tile(Kernel::typed(Family::KeptFlags, ty), blocks, threads, 0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use scan_abi::tuning::for_arch;

    const SM90: &Tuning = for_arch(90);

    #[test]
    fn large_comparisons_of_4_and_8_byte_elements_take_the_pipelined_kernel() {
        let family = |ty: ElemType, n, pred, aligned| {
            plan(SM90, ty, n, pred, CompactKernel::Auto, aligned).unwrap().launch.kernel.family
        };
        let big = 1 << 24;
        assert_eq!(family(ElemType::U32, big, predicate::GREATER, true), Family::CompactPipelined);
        assert_eq!(family(ElemType::F64, big / 2, predicate::NONZERO, true), Family::CompactPipelined);
        assert_eq!(family(ElemType::U32, big - 1, predicate::GREATER, true), Family::Compact, "under 64 MiB");
        assert_eq!(family(ElemType::U32, big, predicate::FLAGS, true), Family::Compact, "flags");
        assert_eq!(family(ElemType::U32, big, predicate::GREATER, false), Family::Compact, "unaligned");
        assert_eq!(family(ElemType::U16, big, predicate::GREATER, true), Family::Compact, "2-byte elements");
        let p = plan(SM90, ElemType::U64, big / 2, predicate::GREATER, CompactKernel::Auto, true).unwrap();
        assert_eq!(p.state.value_bytes, 8);
        assert_eq!(p.stages, Some(SM90.shapes.compact_pipeline.at(8).stages));
    }

    #[test]
    fn a_chosen_kernel_runs_or_is_refused() {
        let forced = |ty, aligned| plan(SM90, ty, 100, predicate::FLAGS, CompactKernel::Pipelined, aligned);
        assert_eq!(forced(ElemType::I32, true).unwrap().launch.kernel.family, Family::CompactPipelined);
        assert!(forced(ElemType::U8, true).unwrap_err().to_string().contains("4- and 8-byte"));
        assert!(forced(ElemType::U32, false).unwrap_err().to_string().contains("16-byte boundary"));
        let tiles = plan(SM90, ElemType::U32, 1 << 28, predicate::GREATER, CompactKernel::Tiles, true).unwrap();
        assert_eq!(tiles.launch.kernel.family, Family::Compact);
    }

    #[test]
    fn kept_flags_take_a_thread_per_element_of_every_type() {
        for ty in ElemType::ALL {
            let l = kept_flags(SM90, ty, 1000).unwrap();
            assert_eq!((l.kernel, l.threads), (Kernel::typed(Family::KeptFlags, ty), SM90.shapes.helper_threads));
            assert!(l.kernel.family.built_for(ty, None));
        }
        assert!(kept_flags(SM90, ElemType::U8, 1 << 50).unwrap_err().to_string().contains("blocks"));
    }
}
