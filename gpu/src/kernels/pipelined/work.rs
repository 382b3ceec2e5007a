//! What a pipelined kernel does with its tiles, and the layouts of a tile its work reads.

use crate::arch::{
    bulk_commit, bulk_copy_to_global,
    fence_proxy_async_shared, lane, sync_warp,
    WARP,
};
use crate::lookback::StatusValue;
use crate::op::ScanOp;
use crate::smem::Smem;
use core::mem::size_of;

/// What a pipelined kernel does with its tiles; [`pipeline`] supplies the roles around it. A
/// tile's work splits in two: a reducing warp's total of its part, as soon as the tile has
/// landed, and a scanning warp's share, once the prefix of everything before it is known.
pub trait TileWork: Copy {
    /// What the stages hold.
    type T: Copy;
    /// A tile's aggregate, published for the look-back.
    type A: StatusValue;
    /// How aggregates combine.
    type O: ScanOp<Self::A>;
    /// A second input staged beside the first, element for element, with the element before
    /// each tile (the keys or head flags of a segmented scan); `()` where there is none.
    type K: Copy;
    /// What each lane of a reducing warp leaves in shared memory for the lane of the scanning
    /// warp that finishes the same share, so that work done to reduce it is not done again;
    /// `()` where nothing is left.
    type L: Copy;
    /// Elements per 16-byte vector of `T`.
    const V: usize;

    /// Where the second input starts (read only where `K` is not `()`; on a 16-byte boundary
    /// where the pipeline is told its inputs are aligned).
    #[inline(always)]
    fn side(self) -> *const Self::K {
        core::ptr::null()
    }

    /// What comes before the first tile (none: nothing).
    fn start(self) -> Option<Self::A>;
    /// What fills a partial tile's stage past the end.
    fn fill(self) -> Self::T;
    /// The total of rows `rows` (of 32 lanes' vectors each) of the reducing warp's part at
    /// `part`, whose first element is element `first` of the input; in every lane. `side` is the
    /// second input from the element before the part on: `side.get(i + 1)` goes with element `i`.
    /// `left` holds one entry per lane for the scanning warp of these rows' share.
    unsafe fn reduce(
        self,
        part: Smem<Self::T>,
        side: Smem<Self::K>,
        left: Smem<Self::L>,
        rows: core::ops::Range<usize>,
        first: u64,
    ) -> Self::A;
    /// Finishes a scanning warp's share of `rows` rows at `share` (its second input at `side`,
    /// as [`Self::reduce`] has it, and what the reducing warp left at `left`): its first element
    /// is element `first` of the input, `valid` of its elements exist, and `before` comes before
    /// it. Returns whether lane 0 left a bulk copy out of the share in flight (a committed bulk
    /// group), so that the stage stays taken until the copy has read it.
    unsafe fn finish(
        self,
        share: Smem<Self::T>,
        side: Smem<Self::K>,
        left: Smem<Self::L>,
        rows: usize,
        before: Option<Self::A>,
        first: u64,
        valid: u32,
    ) -> bool;
    /// Whether a tile whose aggregate is `total` has that as its inclusive prefix, whatever came
    /// before it (a segment starts in it): it is published as such at once, and look-backs stop
    /// there.
    #[inline(always)]
    fn closes(self, total: Self::A) -> bool {
        let _ = total;
        false
    }
    /// Told by one thread the inclusive prefix of `tile` (of `tiles`) once it is known.
    #[inline(always)]
    unsafe fn prefix_known(self, tile: u32, tiles: u64, inclusive: Self::A) {
        let _ = (tile, tiles, inclusive);
    }
}

/// Lane `l`'s vector `j` within a warp's part of a tile, as an element index into it
/// (warp-striped, as the register tile), for vectors of `v` elements.
#[inline(always)]
pub fn striped(j: usize, l: u32, v: usize) -> u32 {
    ((j * WARP as usize + l as usize) * v) as u32
}

/// Lane `l`'s vector `i` of a share of `b` vectors per lane in the blocked arrangement (lane `l`
/// holds vectors `l * b .. (l + 1) * b`), as an element index into the share, for vectors of `v`
/// elements. With `b` odd, a quarter-warp's 16-byte accesses fall in eight different bank groups.
#[inline(always)]
pub fn blocked(i: usize, l: u32, b: usize, v: usize) -> u32 {
    ((l as usize * b + i) * v) as u32
}

/// Has lane 0 copy the `elems` finished elements at `share` out to `dst` in one bulk copy (a
/// committed bulk group), once every lane's stores into the share are ordered before it.
#[inline(always)]
pub unsafe fn store_share<T: Copy>(share: Smem<T>, dst: *mut T, elems: u32) {
    fence_proxy_async_shared();
    sync_warp();
    if lane() == 0 {
        bulk_copy_to_global(dst as *mut u8, share.at(0) as *const u8, elems * size_of::<T>() as u32);
        bulk_commit();
    }
}
