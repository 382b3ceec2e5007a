//! Tile and pipeline shapes, and values per element size: the geometry the tuning table is
//! written in ([`crate::tuning`]) and the kernels are instantiated with.

/// Bytes per vector load or store.
pub const VECTOR_BYTES: usize = 16;

/// Elements per 16-byte vector.
pub const fn vector_elems(elem_size: usize) -> u32 {
    (VECTOR_BYTES / elem_size) as u32
}

/// Threads per block and items (elements, or rows of a column tile) per thread.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Tile {
    pub threads: u32,
    pub items: u32,
}

impl Tile {
    pub const fn new(threads: u32, items: u32) -> Tile {
        Tile { threads, items }
    }

    pub const fn tile(self) -> u32 {
        self.threads * self.items
    }

    /// Rows in a column tile whose rows take `per_row` threads each, every thread `items` rows.
    pub const fn tile_rows(self, per_row: u32) -> u64 {
        (self.threads / per_row) as u64 * self.items as u64
    }
}

/// One value per element size: 1, 2, 4, 8 and 16 bytes (16: pairs of `f64`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BySize<T>(pub [T; 5]);

impl<T: Copy> BySize<T> {
    /// `narrow` for elements of up to 4 bytes, `wide` for 8 and 16.
    pub const fn split(narrow: T, wide: T) -> BySize<T> {
        BySize([narrow, narrow, narrow, wide, wide])
    }

    /// The same values but `value` for `elem_size`.
    pub const fn with(mut self, elem_size: usize, value: T) -> BySize<T> {
        self.0[elem_size.trailing_zeros() as usize] = value;
        self
    }

    pub const fn at(&self, elem_size: usize) -> T {
        assert!(elem_size.is_power_of_two() && elem_size <= 16, "element sizes are 1, 2, 4, 8 or 16 bytes");
        self.0[elem_size.trailing_zeros() as usize]
    }
}

/// A persistent block of warp roles (`gpu::kernels::pipelined`): `warps` warps reduce each tile
/// as soon as the bulk-copy engine has brought it in, `warps * split` scan and store it, one warp
/// claims tiles and starts their copies, one looks back. A tile is `warps * 32 * items` elements;
/// `stages` tiles are in flight per block (a launch argument, so a
/// [`Choices`](crate::tuning::Choices) may change it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pipeline {
    pub warps: u32,
    pub items: u32,
    pub stages: u32,
    pub split: u32,
    /// Scanning warps take their share blocked (each lane a run of `rows()` vectors, one warp scan
    /// per share, stored by one bulk copy) rather than warp-striped (one warp scan per row).
    pub blocked: bool,
}

impl Pipeline {
    /// Warp-striped shares of 128 bytes per lane of a reducing warp, four reducing warps.
    pub const fn striped(elem_size: usize, stages: u32) -> Pipeline {
        Pipeline { warps: 4, items: (128 / elem_size) as u32, stages, split: 1, blocked: false }
    }

    /// Blocked shares of `vectors` 16-byte vectors per lane, `split` scanning warps per reducing one.
    pub const fn blocked(elem_size: usize, vectors: u32, split: u32, stages: u32) -> Pipeline {
        Pipeline { warps: 4, items: vectors * vector_elems(elem_size), stages, split, blocked: true }
    }

    /// [`Self::striped`] for every element size.
    pub const fn striped_all(stages: u32) -> BySize<Pipeline> {
        let s = Pipeline::striped;
        BySize([s(1, stages), s(2, stages), s(4, stages), s(8, stages), s(16, stages)])
    }

    /// [`Self::blocked`] for every element size.
    pub const fn blocked_all(vectors: u32, split: u32, stages: u32) -> BySize<Pipeline> {
        let (v, p, s) = (vectors, split, stages);
        let b = Pipeline::blocked;
        BySize([b(1, v, p, s), b(2, v, p, s), b(4, v, p, s), b(8, v, p, s), b(16, v, p, s)])
    }

    pub const fn with_split(self, split: u32) -> Pipeline {
        Pipeline { split, ..self }
    }

    pub const fn tile(self) -> u32 {
        self.warps * 32 * self.items
    }

    /// Threads per block: the reducing and the scanning warps, the loading and the look-back warp.
    pub const fn threads(self) -> u32 {
        (self.warps * (1 + self.split) + 2) * 32
    }

    /// Rows of 32 vectors (of `vector_elems` elements) in a scanning warp's share of a tile.
    pub const fn rows(self, vector_elems: u32) -> u32 {
        self.items / vector_elems / self.split
    }

    /// The blocked run per lane the kernel is built for: [`Self::rows`] where blocked, else 0.
    pub const fn blocked_run(self, vector_elems: u32) -> usize {
        if self.blocked {
            self.rows(vector_elems) as usize
        } else {
            0
        }
    }
}
