//! Pure planners: a request and a [`Tuning`](crate::Tuning) in, a plan out (kernel, grid, block, shared memory,
//! temporary storage). Nothing here touches the GPU, so every decision is tested on the CPU; the
//! launchers in `crate::launch` only carry plans out.

pub mod batched;
pub mod compact;
#[cfg(test)]
mod large;
pub mod multi;
pub mod partition;
#[cfg(test)]
mod properties;
pub mod scan;
pub mod segmented;
pub mod sort;
pub mod streamed;

use crate::error::{Error, Result};
use scan_abi::{status, Kernel};

/// How many blocks a launch has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Grid {
    /// This many blocks.
    Blocks(u64),
    /// A persistent grid: as many blocks as fit on the GPU at once (at most `per_sm` an SM when
    /// given), but no more than `tiles`; each block takes tiles until none is left.
    Persistent { tiles: u64, per_sm: Option<u32> },
}

/// One kernel launch's geometry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Launch {
    pub kernel: Kernel,
    pub grid: Grid,
    pub threads: u32,
    /// Bytes of dynamic shared memory.
    pub smem: u32,
}

/// How far a launch moves the tile counter in the temporary storage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Claims {
    /// Every block claims one tile: this many.
    Tiles(u64),
    /// A persistent grid: every tile, then one failed claim per block.
    TilesAndBlocks(u64),
}

/// The tile-status words a single-pass-style launch keeps in the temporary storage (see
/// `scan_abi::status`): `slots` words carrying values of `value_bytes`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TileState {
    pub slots: u64,
    pub value_bytes: usize,
    pub claims: Claims,
}

impl TileState {
    /// One slot per tile, each tile claimed by one block.
    pub fn per_tile(tiles: u64, value_bytes: usize) -> Result<TileState> {
        TileState { slots: tiles, value_bytes, claims: Claims::Tiles(tiles) }.checked()
    }

    /// One slot per tile of a persistent grid.
    pub fn persistent(tiles: u64, value_bytes: usize) -> Result<TileState> {
        TileState { slots: tiles, value_bytes, claims: Claims::TilesAndBlocks(tiles) }.checked()
    }

    /// Bytes of temporary storage: the tile counter and the status words.
    pub fn bytes(&self) -> u64 {
        status::temp_bytes(self.slots, self.value_bytes)
    }

    /// An [`Error::OutOfRange`] unless the slots and the claims are fewer than [`MAX_TILES`].
    fn checked(self) -> Result<TileState> {
        let claimed = match self.claims {
            Claims::Tiles(t) | Claims::TilesAndBlocks(t) => t,
        };
        let most = self.slots.max(claimed);
        if most >= MAX_TILES {
            return Err(Error::out_of_range("the tiles of one launch", most, format!("fewer than {MAX_TILES}")));
        }
        Ok(self)
    }
}

/// The tiles (and status slots) of one launch are fewer than this: the kernels index them in 32
/// bits, and claim them from a 32-bit counter that also counts the persistent blocks' failed
/// claims.
pub const MAX_TILES: u64 = u32::MAX as u64 / 2;

/// Blocks of one grid: the most a launch may have.
pub const MAX_BLOCKS: u64 = i32::MAX as u64;

/// An [`Error::OutOfRange`] for `what` unless `blocks` blocks fit one grid.
pub fn check_blocks(what: &str, blocks: u64) -> Result<()> {
    if blocks > MAX_BLOCKS {
        return Err(Error::out_of_range(what, blocks, format!("at most {MAX_BLOCKS} (blocks of one grid)")));
    }
    Ok(())
}

/// A launch of `tiles` blocks, one tile each.
pub fn per_tile(kernel: Kernel, tiles: u64, threads: u32, smem: u32) -> Launch {
    Launch { kernel, grid: Grid::Blocks(tiles), threads, smem }
}

/// The `flags` argument of the scan kernels.
pub fn scan_flags(exclusive: bool, has_init: bool) -> u32 {
    use scan_abi::kernel::flags::{EXCLUSIVE, HAS_INIT};
    (if exclusive { EXCLUSIVE } else { 0 }) | (if has_init { HAS_INIT } else { 0 })
}

/// An error unless an output of `len` items has room for the `n` items of the input.
pub fn check_output(len: usize, n: u64, items: &'static str) -> Result<()> {
    crate::error::at_least("the output", len as u64, n, items)
}

/// The greatest common divisor of `a` and `b` (`a` where `b` is 0).
pub(crate) fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_output_shorter_than_the_input_is_refused() {
        assert!(check_output(5, 5, "elements").is_ok());
        assert!(check_output(6, 0, "elements").is_ok());
        let e = check_output(4, 5, "maps").unwrap_err().to_string();
        assert!(e.contains("the output holds 4 maps, but 5 are needed"), "{e}");
    }

    #[test]
    fn tile_state_holds_the_counter_and_a_word_per_slot() {
        let s = TileState::per_tile(1000, 4).unwrap();
        assert_eq!(s.bytes(), status::COUNTER_BYTES as u64 + 1000 * 8);
        assert_eq!(TileState::per_tile(10, 8).unwrap().bytes(), status::COUNTER_BYTES as u64 + 10 * 16);
        assert_eq!(TileState::per_tile(10, 16).unwrap().bytes(), status::COUNTER_BYTES as u64 + 10 * 32);
        assert!(TileState::persistent(MAX_TILES - 1, 4).is_ok());
        let e = TileState::persistent(MAX_TILES, 4).unwrap_err();
        assert!(matches!(e, Error::OutOfRange { .. }), "{e:?}");
        assert_eq!(e.to_string(), "the tiles of one launch is 2147483647, but it must be fewer than 2147483647");
    }
}
