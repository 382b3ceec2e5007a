//! Tile shapes as data: (architecture, element size) -> threads per block and items per thread.
//!
//! The kernels are instantiated with these shapes as compile-time constants, and the host plans
//! grids, temporary storage and shared memory from the same table, so the two cannot disagree.

/// Threads per block and items per thread of one tile.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TileShape {
    pub threads: u32,
    pub items: u32,
}

impl TileShape {
    pub const fn tile(self) -> u32 {
        self.threads * self.items
    }

    /// Rows in a column tile whose rows take `per_row` threads each, every thread `items` rows.
    pub const fn tile_rows(self, per_row: u32) -> u64 {
        (self.threads / per_row) as u64 * self.items as u64
    }
}

/// Bytes per vector load or store in the single-pass kernel.
pub const VECTOR_BYTES: usize = 16;

/// Elements per 16-byte vector.
pub const fn vector_elems(elem_size: usize) -> u32 {
    (VECTOR_BYTES / elem_size) as u32
}

/// Single-pass decoupled look-back. `items` is a multiple of the vector width.
///
/// Measured on the H200 at 2^28 elements (percent of a same-run device copy): the look-back
/// chain, not the loads, limits this kernel (ncu: 64% of warp stall cycles wait at the barrier
/// behind the look-back warp), so larger tiles pay until registers cut the blocks per SM.
/// 4-byte: 256x16 62.1%, 256x32 67.0%, 512x32 59.7%. 8-byte: 256x8 62.1%, 384x8 66.6%, 256x16
/// 72.2%, 256x24 70.4%. 1- and 2-byte elements stay packed in registers through the look-back,
/// so their tiles hold as many bytes as the 4-byte tile: 2-byte 256x64 71.4% (add, xor; max
/// 54.6%), as fast as 4-byte in the same run (72.6%); 1-byte 256x128 33.6% while each byte was
/// unpacked, combined and repacked; scanned a word at a time (`dp4a` for add, shifted words for
/// xor, or, and; `gpu::op::PackedBytes`) 69.3-70.1%, and 70.6-71.1% at 2^30 (max, byte by byte
/// within the word, 53-55%: 80 registers, 3 blocks per SM; bounded to 4 it spills 54-68 bytes).
/// One element per register they measured 1-byte 256x32 29.5%, 256x64 35.7%; 2-byte 256x16
/// 41.6%, 384x32 49.2% (the compaction keeps those shapes, [`compact`]).
pub const fn single_pass(arch: u32, elem_size: usize) -> TileShape {
    let _ = arch;
    match elem_size {
        1 => TileShape { threads: 256, items: 128 },
        2 => TileShape { threads: 256, items: 64 },
        4 => TileShape { threads: 256, items: 32 },
        8 => TileShape { threads: 256, items: 16 },
        // Pairs of f64 (the recurrence): fewer items keep the tile in registers (16 spilled).
        _ => TileShape { threads: 256, items: 4 },
    }
}

/// Whether the single-pass scan stages its tile in shared memory (asynchronous copies, the
/// elements read back after the look-back) instead of holding it in registers. Same tile
/// shapes. On the H200 at 2^26-2^30, in one run: 8-byte elements staged f64 68.0-68.3% of copy
/// against 62.7-64.1% in registers (56 registers instead of 2 blocks per SM), u64 71.6-71.7%
/// against 71.7-72.8%; 4-byte staged 62-63% against 68% (f32) and 73% (u32). The recurrences
/// (another run): f64 pairs, 16 bytes, 54.1% staged (8 per thread) against 41.7% (4 per thread in
/// registers); f32 pairs packed in 8 bytes 70.9% against 72.0%. `GPU_SCAN_STAGED=0` or `1`
/// overrides it, to measure both in one run.
pub const fn single_pass_staged(arch: u32, elem_size: usize) -> bool {
    let _ = arch;
    elem_size >= 8
}

/// Tile of the staged single-pass kernels: the register tile, except for 16-byte elements (the
/// f64 recurrence's pairs), whose register tile stops at 4 per thread (8 spilled) while shared
/// memory holds 8.
pub const fn single_pass_staged_shape(arch: u32, elem_size: usize) -> TileShape {
    match elem_size {
        16 => TileShape { threads: 256, items: 8 },
        _ => single_pass(arch, elem_size),
    }
}

/// Stream compaction: the single-pass shapes, except for 1- and 2-byte elements, which the
/// compaction holds one per register. Other tiles of 4-byte elements measured slower on the H200
/// (`u32` > 3 at 2^28, each build twice in one run, CUB's DeviceSelect::If 0.586-0.587 ms;
/// `docs/results/compact-tiles*-s12-h200.log`): 256x32 at 4 blocks per SM (this) 0.596-0.600 ms,
/// 256x16 at 4 blocks 0.739-0.740, at 6 blocks 0.629-0.640, 384x32 at 2 blocks 0.678-0.680,
/// 512x32 at 2 blocks 0.613-0.615.
pub const fn compact(arch: u32, elem_size: usize) -> TileShape {
    match elem_size {
        1 => TileShape { threads: 256, items: 64 },
        2 => TileShape { threads: 384, items: 32 },
        _ => single_pass(arch, elem_size),
    }
}

/// Column scan of a row-major matrix (`batched_columns`): `threads` per block, `items` rows per
/// thread. A block splits into groups of `strip` threads, one per column of its strip; at most
/// [`COLUMN_GROUPS`] groups, so combining the groups' totals stays a short loop.
///
/// Every tile looks back once per column, so taller tiles mean fewer look-backs per element. On
/// the H200 at 2^28 `f32`, 64 rows a thread (126 registers, 2 blocks per SM) against 32 (64
/// registers, 4 blocks), the two builds in one run (`docs/results/sort-columns-ab2-s21-h200.log`; `ab1` the
/// same on the first shapes): 1048576 x 256 78.3% / 74.9% of copy, 262144 x 1024 85.2% / 84.0%,
/// 256 x 1048576 91.8% / 83.8%, 16777216 x 16 67.1% / 65.9%; wide matrices lose some (65536 x
/// 4096 82.9% / 86.3%, 16384 x 16384 82.5% / 86.1%: plenty of look-back chains, and fewer
/// blocks in flight).
pub const fn columns(arch: u32, elem_size: usize) -> TileShape {
    let _ = arch;
    TileShape { threads: 256, items: if elem_size > 4 { 16 } else { 64 } }
}

/// Column tiles of 16-byte vectors (`batched_columns_vec`, rows on 16-byte boundaries): threads
/// per block, and consecutive rows per thread, each one vector of adjacent columns. 16 rows
/// against 8 (116 registers and 2 blocks per SM, against 69 and 3), the two builds in one run
/// at 2^27 `f64` (`docs/results/sort-columns-ab2-s21-h200.log`): 524288 x 256 85.8% / 79.5% of
/// copy, 4194304 x 64 (2^28) 80.4% / 70.9%, 8388608 x 16 71.7% / 61.9% (half the look-backs).
pub const fn columns_vec(arch: u32, elem_size: usize) -> TileShape {
    let _ = (arch, elem_size);
    TileShape { threads: 256, items: 16 }
}

/// Column tiles in shared memory (`batched_columns_bulk`, a row of one strip of 16-byte vectors):
/// threads per block and rows per thread group. 27 rows (odd, so that the eight groups of a warp
/// reading 64-byte rows meet both halves of the banks) make 110,592-byte tiles whatever the row's
/// width, the tallest that leave two blocks to an SM (115,232 bytes of shared memory a block).
/// On the H200 at 2^28 with [`columns_bulk_ahead`]'s 66 tiles ahead, against 23 rows in one run
/// (`docs/results/columns-height27-s34-h200.log`, percent of a same-run copy): 2097152 x 128
/// `f32` 77.5% -> 80.6%, `u32` max 77.8% -> 80.2%, 4194304 x 64 `f64` 77.4% -> 79.9%, 4194304 x
/// 64 `f32` 81.0% -> 83.9%, 8388608 x 16 `f64` 83.2% -> 86.0%, 16777216 x 16 `f32` 85.2% ->
/// 87.1%, `u32` max 84.8% -> 87.1%. Taller tiles leave one block to an SM and lose 10-15 points
/// (`columns-wide27-s34-h200.log`, 2097152 x 128 `f32`: 27 rows 81.0%, 31 rows 66.5%, 39 rows
/// 69.2%, 47 rows 70.5%). Session 33 chose 23 rows over 15 (three blocks an SM) and none ahead
/// (`columns-tall-s33-h200.log`): 4194304 x 64 `f32` 77.7% -> 81.2%, 8388608 x 16 `f64` 79.9% ->
/// 83.4%; 13 and 19 rows were slower than 15, and 7 and 11 slower still
/// (`columns-items-s33-h200.log`). A look-back window of one tile gained nothing
/// ([`column_lookback_window`]).
pub const fn columns_bulk(arch: u32, elem_size: usize) -> TileShape {
    let _ = (arch, elem_size);
    TileShape { threads: 256, items: 27 }
}

/// [`columns_bulk`] at `items` rows a thread group: the height is the launch's, so the host may
/// override it to measure heights in one run.
pub const fn columns_bulk_at(arch: u32, elem_size: usize, items: u32) -> TileShape {
    TileShape { items, ..columns_bulk(arch, elem_size) }
}

/// How many tiles after the one it claimed each block of the column tiles in shared memory asks
/// the bulk-copy engine to bring into L2 (`prefetch.global.L2` of a whole tile, by its first
/// thread): 66, half the H200's SMs, a quarter of the blocks in flight (two an SM). At 23 rows
/// on the H200, in one run (`docs/results/columns-tall-s33-h200.log`), tiles ahead 0 / 66 / 132
/// / 264: 4194304 x 64 `f32` 79.6% / 81.2% / 80.7% / 64.6% of copy, 8388608 x 16 `f64` 81.4% /
/// 83.4% / 82.6% / 66.0%, 16777216 x 16 `f32` 82.5% / 85.1% / 84.1% / 67.4% (264 tiles ahead
/// evict the tiles in flight from L2 before their blocks read them). At 27 rows, tiles ahead 33 /
/// 66 / 99 / 132 (`columns-ahead27-s34-h200.log`): 2097152 x 128 `u32` max 80.6% / 81.0% / 80.5%
/// / 78.4%, `f32` 81.3% / 80.9% / 80.7% / 78.4%, 4194304 x 64 `f64` 81.2% / 80.7% / 80.6% /
/// 78.3%, 16777216 x 16 `f32` 86.7% / 86.5% / 86.5% / 81.0%.
pub const fn columns_bulk_ahead(arch: u32) -> u32 {
    let _ = arch;
    66
}

/// Whether the scan down the columns of a matrix whose rows are `row_vectors` 16-byte vectors
/// (one strip, on 16-byte boundaries) takes the column tiles in shared memory
/// ([`columns_bulk`]) rather than the vector column tiles: up to 32 vectors (512-byte rows), all
/// the kernel takes. Rows of 32 vectors since session 34, at 27 rows a thread group and 66 tiles
/// ahead, against the vector tiles in two runs (`docs/results/columns-wide27-s34-h200.log`,
/// `columns-height27-s34-h200.log`): 2097152 x 128 `f32` 77.3% -> 81.0% and 80.6% of copy,
/// 4194304 x 64 `f64` 80.3% against 80.6% and 79.9%. Up to 16 vectors since session 31, at 15
/// rows a thread group and none ahead, against the vector tiles in one run, twice
/// (`docs/results/columns-bulk-s31-h200.log`): 67108864 x 4 `f32` 38.2% -> 71.8-72.0%, 16777216 x
/// 16 `f32` 73.6-73.7% -> 82.7-82.8%, 33554432 x 8 `f64` 69.2-69.4% -> 82.9-83.1%, 8388608 x 16
/// `f64` 72.3-72.5% -> 79.7-79.8%, 4194304 x 64 `f32` 76.6-76.7% -> 77.6-77.8% (rows of 32
/// vectors then lost: 2097152 x 128 `f32` 73.0-73.1% against 77.0-77.1%). Starting each block's
/// copy before the tile counter answered (its own index's tile, copied again when the counter
/// named another) was slower on each of the six: 61.7-61.8%, 75.8%, 75.8-76.0%, 76.2%, 75.0%,
/// 73.5-73.8%.
pub const fn columns_bulk_rows(arch: u32, row_vectors: u64) -> bool {
    let _ = arch;
    row_vectors <= 32
}

/// Whether the scan down the columns of `elem_size`-byte elements takes the vector column tiles
/// when its rows start on 16-byte boundaries: for 8-byte types since session 20, and for 4-byte
/// types since session 23. 8-byte types at 2^28 elements (2^27 `f64`), against the scalar tiles
/// in one run, twice (`docs/results/columns-sort-s20-h200.log`): 524288 x 256 `f64` 76.4-76.5% ->
/// 79.4-79.5% of copy, 4194304 x 64 `f64` 67.5-68.0% -> 70.6-70.9%. 4-byte types then gained
/// nothing (1048576 x 256 `f32` 75.7-76.2% / 75.5-76.4%), but since session 21's taller tiles
/// (16 rows a thread) they do, at 2^28 against the scalar tiles in one run, twice
/// (`docs/results/columns-vec4b-s23-h200.log`; `columns-vec4-s23-h200.log` the first three): 1048576
/// x 256 `f32` 77.7-78.9% -> 80.4-80.8%, `u32` max 76.6-77.2% -> 81.0%, `i32` add 59.4-59.7% ->
/// 80.7-81.0%, 262144 x 1024 84.8-84.9% -> 88.0%, 65536 x 4096 82.7-83.0% -> 88.9-89.0%, 16384 x
/// 16384 82.2-82.3% -> 88.4-88.7%, 4194304 x 64 71.7% -> 73.9-74.8%, 16777216 x 16 67.3-67.7% ->
/// 68.6-69.3%, 256 x 1048576 91.1-91.3% -> 92.3-92.4%, and at 2^24 (65536 x 256) 68.8-69.5% ->
/// 73.2-74.6%.
pub const fn columns_vec_by_default(arch: u32, elem_size: usize) -> bool {
    let _ = arch;
    elem_size >= 4
}

/// Threads per row of strip in the vector column tiles for a matrix of `cols` columns (a power of
/// two up to 32; the strip is this many 16-byte vectors): strips as wide as the scalar tiles'
/// ([`column_strip`]), so as many look-back chains.
pub const fn column_vec_threads(arch: u32, cols: u64, elem_size: usize) -> u32 {
    let vector = (VECTOR_BYTES / elem_size) as u32;
    let t = column_strip(arch, cols) / vector;
    if t == 0 {
        1
    } else if t > 32 {
        32
    } else {
        t
    }
}

/// Tiles of its column each look-back thread of the vector column tiles reads a round, for a
/// matrix of `strips` strips of `elem_size`-byte elements: 4 (`batched_columns_vecw4_<t>_<op>`)
/// where a matrix has few strips, so few look-back chains, each as long as the matrix has row
/// blocks; else 1 (`batched_columns_vec_<t>_<op>`). On the H200 at 2^28, window 1 / 4 / 8,
/// interleaved twice in one run (`docs/results/columns-window-s28-h200.log`): 16777216 x 16
/// `f32` (1 strip) 68.9-69.2% / 73.8-74.1% / 71.0-71.1% of copy, `u32` max 68.7-68.8% /
/// 73.4-73.6% / 70.7-70.8%, 4194304 x 64 `f32` (4 strips) 74.4% / 76.9% / 73.3-73.4%, 1048576 x
/// 256 `f32` (16 strips) 80.8% / 80.8-80.9% / 78.4%; 33554432 x 8 `f64` (1 strip) 68.4% /
/// 69.6-69.7% / 69.5-69.6%, 8388608 x 16 `f64` (1 strip) 71.7% / 72.2-72.4% / 72.5-72.8%, but
/// 4194304 x 64 `f64` (4 strips) 80.3-80.7% / 78.7% / 76.7-76.8%. Session 20 had measured a
/// window of 4 on wide matrices and 64 `f64` columns only, where it lost. The column tiles in
/// shared memory (one strip) always read 4: a window of 1 (session 31's
/// `batched_columns_bulkw1`, since removed) measured no faster at 15 rows a thread group
/// (`docs/results/columns-items-s33-h200.log`, window 1 / 4): 4194304 x 64 `f32` 77.9% / 77.9%,
/// 8388608 x 16 `f64` 79.4% / 79.7%, 16777216 x 16 `f32` 82.0% / 82.6%.
pub const fn column_lookback_window(arch: u32, strips: u64, elem_size: usize) -> u32 {
    let _ = arch;
    if (elem_size <= 4 && strips <= 4) || strips == 1 {
        4
    } else {
        1
    }
}

/// Column scan by vectors (`batched_column_vectors`, matrices of at most `items` rows): threads
/// per block, and rows each thread has in flight at once, one vector each.
pub const fn column_vectors(arch: u32, elem_size: usize) -> TileShape {
    let _ = (arch, elem_size);
    TileShape { threads: 256, items: 8 }
}

/// Bytes of adjacent columns one thread of the column-vector scan owns and moves per access.
/// On the H200, 8 rows at 2^28 elements (f64 2^27), in one run, with 16-byte / 8-byte accesses:
/// `u32` 80.0% / 95.3% of copy, `f32` 79.8% / 85.4%, `f64` 80.3% / 97.3%; the column tiles
/// before them 51.9%, 48.2% and 91.6%. (Launch bounds for 4 blocks per SM helped the 16-byte
/// `f32` kernel, 86.1%, and cost the 8-byte one, 77.0%.) With 16 rows, two batches per thread,
/// `f32` ran at 87.4% / 76.0% against 90.2% in column tiles, so only matrices of at most one
/// batch of rows come here.
pub const fn column_vector_bytes(arch: u32, elem_size: usize) -> usize {
    let _ = arch;
    if elem_size > 8 {
        elem_size
    } else {
        8
    }
}

/// Row scan of a row-major matrix (`batched_rows`): half the single-pass tile, since no
/// look-back waits behind it and the smaller tile keeps more blocks on an SM.
pub const fn rows(arch: u32, elem_size: usize) -> TileShape {
    let shape = single_pass(arch, elem_size);
    TileShape { threads: shape.threads, items: shape.items / 2 }
}

/// Short-row scan of a row-major matrix (`batched_short_rows`, rows of at most one tile): the row
/// kernel's tile, which holds as many whole rows as fit.
pub const fn short_rows(arch: u32, elem_size: usize) -> TileShape {
    rows(arch, elem_size)
}

/// Fewest rows the row kernel takes (one block per row at a time): with fewer, SMs idle, and the
/// single-pass scan with one chain of tiles per row (`batched_long_rows`), which splits long rows
/// across blocks, is used instead. On the H200, 256 rows of 2^20 `f32` in one run: row kernel
/// 84.2% of copy (also with the threshold at 132), one chain per row 68.3% (it was 1024).
pub const ROW_KERNEL_MIN_ROWS: u64 = 256;

/// Most blocks of the row kernel; beyond that blocks take several rows each.
pub const ROW_KERNEL_MAX_BLOCKS: u64 = 1 << 20;

/// Radix sort pass (one sweep per digit): threads per block and keys per thread. Bigger tiles
/// spread each tile's fixed work (zeroing the match words, the 256-digit scans, the look-back,
/// the barriers) over more keys: on the H200 in one run, 2^28 keys (`u32` / `u64`) sorted in
/// 7.58 / 18.50 ms with 256 threads of 16 / 12 keys, 7.11 / 17.46 ms with 384 of 16 / 12 and
/// 6.86 / 17.45 ms with 384 of 18 / 12 (2 blocks per SM; 20 `u32` keys a thread spill 56 bytes);
/// with the faster digit counting after it, 6.52 / 16.91 ms against CUB's 4.21 / 13.09 ms.
/// The block stages its keys (and u32 values) in shared memory, so 8-byte keys take fewer.
pub const fn sort(arch: u32, key_size: usize) -> TileShape {
    let _ = arch;
    TileShape { threads: 384, items: if key_size > 4 { 12 } else { 18 } }
}

/// Whether a radix sort pass finds the lanes of equal digit by ballots (`warp::rank_by_ballot` in
/// gpu/: eight ballots a key, one shared-memory atomic per distinct digit) rather than by match
/// words (`warp::rank_by_match`: five shared-memory accesses a key). Nsight Compute on the match
/// words (one `u32` pass at 2^26, `docs/results/sort-profile-s26-h200.log`): L1 at 91% of its
/// throughput, 63 M shared-memory wavefronts (56% of them bank conflicts) against 22 M in CUB's
/// pass, and 215 M warp instructions against 178 M. The ballots against the match words in one
/// H200 run at 2^28 (`sort-ballot-s26-h200.log`): `u64` keys 15.59 against 16.51 ms, `u32` keys
/// with values 8.88 against 9.17, but `u32` keys alone 6.54 against 5.63 and `f32` 7.28 against
/// 6.08 (not profiled; the `u32` keys-only pass, 18 keys a thread at 56 registers, then spills
/// 84/92 bytes stored/loaded against 32/40, but `f32` 48/56 against 52/60).
pub const fn sort_rank_by_ballot(key_size: usize, values: bool) -> bool {
    values || key_size > 4
}

/// Radix sort pass: how many earlier tiles a digit's look-back reads at once. Each digit walks
/// its own chain back to the nearest tile that has published its running count; reading one tile
/// per memory round trip made that walk a chain of round trips. On the H200 in one run, sorting
/// 2^28 keys (u32 / u64): 1 tile 8.45 / 20.19 ms, 4 tiles 8.00 / 18.81 ms, 8 tiles 8.27 / 19.66 ms;
/// again with session 12's tiles of 384 threads: 4 tiles 6.52 / 16.89 ms, 8 tiles 6.73 / 17.50 ms
/// (`docs/results/sort-ab2-s12-h200.log`).
pub const SORT_LOOKBACK_WINDOW: usize = 4;

/// Radix sort digit counting (every pass's digits in one read): threads per block and keys each
/// thread loads per tile. Its counters fill 128 KB of shared memory (`layout::sort_counts_smem`),
/// so one block per SM, of 1024 threads to keep the SM's issue slots busy (the counting issues
/// about 4 instructions per key and pass). 16-byte loads: 4 of them a tile for either key size.
pub const fn sort_counts(arch: u32, key_size: usize) -> TileShape {
    let _ = arch;
    TileShape { threads: 1024, items: if key_size > 4 { 8 } else { 16 } }
}

/// Most thread groups (row blocks of one strip) in a column-scan tile.
pub const COLUMN_GROUPS: u32 = 32;

/// Widest strip of columns one column-scan tile covers, for a matrix of `cols` columns (the host
/// widens it when a tile would hold more rows than the matrix has). Each strip is its own chain
/// of look-backs, so narrower strips give narrow matrices more chains, at the cost of shorter
/// contiguous runs per row. On the H200 at 2^28 f32, strips of 16 / 32 / 64: 256 columns 77.0% /
/// 71.1% / 73.1% of copy, 1024 columns 81.6% / 83.6% / 73.1%, 4096 columns 81.9% / 88.7% / 85.7%;
/// 16384 columns 88.0% at 64.
pub const fn column_strip(arch: u32, cols: u64) -> u32 {
    let _ = arch;
    if cols <= 512 {
        16
    } else if cols <= 8192 {
        32
    } else {
        64
    }
}

/// Shape of the pipelined single-pass scan (`gpu::kernels::pipelined`): a persistent block whose
/// warps take roles. `warps` warps reduce each tile as soon as the bulk-copy engine has brought
/// it into shared memory and publish its aggregate; `warps * split` warps scan and store the
/// tiles in order, each a `split`th of a reducing warp's part; one warp claims tiles and starts
/// their copies; one looks back. A tile is `warps * 32 * items` elements; `stages` tiles are in
/// flight per block.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Pipeline {
    pub warps: u32,
    pub items: u32,
    pub stages: u32,
    pub split: u32,
    /// Scanning warps take their share blocked (each lane a run of `rows()` vectors, one warp
    /// scan per share) rather than warp-striped (one warp scan per row of vectors).
    pub blocked: bool,
}

impl Pipeline {
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

/// The pipelined single-pass scan's shape: 128 bytes per thread of a reducing warp, so 16 KB
/// tiles, and 6 of them in flight per block (2 blocks per SM by shared memory), one scanning warp
/// per reducing warp.
/// On the H200 at 2^28 (percent of a same-run copy; `docs/results/pipe-shape*-s10-h200.log`),
/// stages 2 / 3 / 4 / 5 / 6 / 7 / 8: `u32` 54.6 / 70.5 / 77.0-77.1 / 73.6 / 86.7-87.5 / 77.3 /
/// 59.1, `f64` 57.2 / 74.8 / 77.4-78.0 / 85.3 / 88.5-88.8 / 86.5 / 50.5 (8 stages fit one block
/// per SM, 4 and fewer three); at 6 stages `f32` 87.5, `u64` 91.2. One block of 6 stages per
/// SM: 50-63; 4 stages at 2 blocks 72-73.5; 32 KB tiles (8 warps) 60-78.
pub const fn pipeline(arch: u32, elem_size: usize) -> Pipeline {
    let _ = arch;
    Pipeline { warps: 4, items: (128 / elem_size) as u32, stages: 6, split: 1, blocked: false }
}

/// [`pipeline`] with two scanning warps per reducing warp: the same tiles, twice the warps for the
/// role that does the most per element.
pub const fn pipeline_split(arch: u32, elem_size: usize) -> Pipeline {
    Pipeline { split: 2, ..pipeline(arch, elem_size) }
}

/// [`pipeline`] with four scanning warps per reducing warp: [`pipeline_of`]'s shape for `u8` add,
/// and for measuring others (`single_pass_pipesplit4_<t>_<op>`, `recurrence_pipesplit4_f64`,
/// chosen by `GPU_SCAN_PIPE_SPLIT=4`).
pub const fn pipeline_split4(arch: u32, elem_size: usize) -> Pipeline {
    Pipeline { split: 4, ..pipeline(arch, elem_size) }
}

/// The pipelined single-pass kernel's shape for `op` over `ty`: [`pipeline`], with more scanning
/// warps per reducing warp ([`pipeline_split`], [`pipeline_split4`]) where the scanning warps were
/// the bottleneck. On the H200 in one run (percent of a same-run copy; one scanning warp per
/// reducing warp -> two, `docs/results/pipe-split-s11-h200.log`, `pipe-narrow-s11-h200.log`):
/// - `f64` min and max at 2^28: 68.1-68.9% -> 79.2-80.5% (add 86.0-88.5% -> 86.0-86.2%);
/// - `u16` at 2^30: add 77.5% -> 84.8%, xor 78.3% -> 83.9%, max 76.8% -> 84.6%;
/// - `u8` at 2^30: max 52.6% -> 59.3%, but add 77.9% -> 77.1%, xor 81.6% -> 76.8%;
/// - add of 4- and 8-byte types at 2^28 loses 1.6-4.4 points (`u32` 87.8-88.2% -> 84.5-84.8%).
///
/// Two -> four (`pipe-split4-s11-h200.log`, interleaved twice): `u8` add at 2^30 77.9-78.3% ->
/// 81.2-81.8% (2^28 73.8-74.5% -> 77.7-78.3%), but `u16` add 83.6-85.0% -> 82.3-82.5% and `f64`
/// min and max 79.6-80.3% -> 62.2-62.6%. (`u8` max with four spills 64 bytes.)
///
/// Once `f64` min and max became a compare and a select (session 15), two -> one scanning warp
/// per reducing warp took them at 2^28 from 1.1722-1.1796 ms (85.5-86.4%) to 1.1158-1.1209 ms
/// (89.9-90.5%, add 1.1046 ms in another run; `docs/results/minmax-split-s15-h200.log`).
pub const fn pipeline_of(arch: u32, ty: crate::ElemType, op: crate::Op) -> Pipeline {
    use crate::{ElemType, Op};
    match (ty, op) {
        (ElemType::U8, Op::Add) => pipeline_split4(arch, ty.size()),
        (ElemType::U16, _) | (ElemType::U8, Op::Min | Op::Max) => pipeline_split(arch, ty.size()),
        _ => pipeline(arch, ty.size()),
    }
}

/// The pipelined narrow-column scan's shape (`batched_columns_pipe_<t>_<op>`, rows of two 16-byte
/// vectors) for elements of `elem_size` bytes.
///
/// 4-byte elements (8 columns): 20 KB tiles (10 vectors per thread of a reducing warp), one
/// scanning warp per reducing warp, 5 stages, shares blocked (each lane a run of 5 matrix rows,
/// one warp scan of 32-byte row totals per share, the share out by one bulk copy). On the H200 at
/// 2^28 interleaved twice against the striped shape below (`docs/results/trial-bulk-s17-h200.log`,
/// trial 2, the rows' running values then in registers with 88-112 bytes of spills): 33554432 x 8
/// `f32` add 63.9-64.1% -> 73.2-73.3% of copy, `u32` max 68.0-68.1% -> 72.1-72.2%; with the running
/// values in shared memory (`blocked-s17-h200.log`, another run): `f32` add 73.4-73.5%, `u32` max
/// 75.6-75.9%, `u32` add 73.5-73.7%. Runs of 3 rows in 12 KB tiles: 61.2-62.5%; of 3 in 24 KB tiles
/// with two scanning warps: 55-57%. Without the bulk copy (each lane's own stores, 32 half
/// sectors a warp store) blocked shares ran at 32-49% (`trial-s17-h200.log`). Each stage is freed
/// as soon as its bulk copy has read it (`kernels::pipelined::pipeline` in gpu/) rather than
/// after the scanning warp's next share, which had held a stage of the five: interleaved twice in one run
/// (`compact-pipe-s18-h200.log`), `f32` add 73.1-73.2% -> 77.5%, `u32` max 75.5% -> 78.6%. Lanes
/// with bit 2 set access each 32-byte row's halves in the other order (`Columns::row` in gpu/),
/// which ends the 2-way bank conflicts of 5-row runs (Nsight Compute: 44% of the shared-memory
/// wavefronts were excess, `docs/results/batched-profile-s19-h200.log`): `f32` add 77.4-77.6% ->
/// 81.0-81.3%, `u32` max 78.5-78.7% -> 81.5% against the build before in the same runs
/// (`rows-columns-s19-h200.log` twice, `rows-columns-final-s19-h200.log`). 3, 4, 6, 8 and 10
/// stages (1 block per SM from 6) ran at 55.8%, 65.3%, 59.0-59.9%, 60.5-60.9%, 57.8-58.0%
/// (`batched-stages-s19-h200.log`).
///
/// 8-byte elements (4 columns) take the same shape since session 22 (the same 20 KB tiles, 5
/// matrix rows of 32 bytes a lane): against session 19's striped shares ([`pipeline_split`]'s 16
/// KB tiles, two scanning warps, a warp scan per row of vectors, 5 stages) interleaved twice in
/// one run (`docs/results/columns-pipe-s22-h200.log`), 67108864 x 4 `f64` add 77.0-77.2% ->
/// 82.3% of copy, 33554432 x 4 `f64` max 51.6-51.8% -> 58.3%, `u64` max 62.6-62.7% ->
/// 73.4-73.8%, though ptxas now spills (stores and loads of 16-32 bytes for `f64`, up to 188 for
/// `u64` add, whose speed was not measured). In session 17, before stages were freed on read and before the rows'
/// halves swapped by lane, blocked `f64` shares had measured slower than striped (70.6-70.7%
/// against 72.7%, `columns8-s17-h200.log`).
///
/// Since session 23 no narrow-column kernel spills under its launch bounds (2 blocks of 320
/// threads, 96 registers): each row is loaded and turned back into column order by selects, where
/// it had been put together half by half (8-188 bytes of spills before). Against the build before,
/// interleaved twice in one run (`docs/results/columns-pipe64-s23-h200.log`): 33554432 x 8 `f32`
/// add 81.3-81.4% -> 82.0-82.1% of copy, 67108864 x 4 `f64` add 82.3-82.4% -> 83.8-84.2%.
pub const fn pipeline_columns(arch: u32, elem_size: usize) -> Pipeline {
    let items = 10 * vector_elems(elem_size);
    Pipeline { items, split: 1, stages: 5, blocked: true, ..pipeline(arch, elem_size) }
}

/// [`pipeline_columns`] for rows of one 16-byte vector (`names::BATCHED_COLUMNS_PIPELINED16`): 11
/// rows a lane, odd so that the runs of eight lanes start in eight different 16-byte bank groups
/// (10 would put lanes 4 apart in the same ones), and at 2 blocks per SM without spills (9 spilled
/// 4 bytes in `u32` and `i32` add; ptxas 13.5). See [`columns_pipelined`] for what it measured.
pub const fn pipeline_columns16(arch: u32, elem_size: usize) -> Pipeline {
    Pipeline { items: 11 * vector_elems(elem_size), ..pipeline_columns(arch, elem_size) }
}

/// Whether the scan down the columns of a `rows x cols` matrix of `elem_size`-byte elements runs
/// as the pipelined narrow-column kernel ([`pipeline_columns`]): rows of exactly two 16-byte
/// vectors (8 columns of 4 bytes, 4 of 8) and at least [`PIPELINED_MIN_BYTES`] in all, where
/// the column tiles give one look-back chain per column. On the H200, interleaved twice in one
/// run against the column tiles (`docs/results/batched-pipe-s16-h200.log`): 33554432 x 8 `f32`
/// add 64.5% -> 65.5-65.8% of copy, `u32` max 63.9% -> 67.8%, 16777216 x 4 `f64` add 37.8-38.0%
/// -> 71.7%; below 64 MiB slower (1048576 x 8 `f32`: 55.1-57.9% -> 49.6-50.5%).
///
/// Rows of one 16-byte vector (4 columns of 4 bytes, 2 of 8) have their own kernels
/// (`names::BATCHED_COLUMNS_PIPELINED16`, [`pipeline_columns16`]), from
/// [`PIPELINED_COLUMNS16_MIN_BYTES`]. On the H200 against the column tiles in shared memory (15
/// rows a thread group), in one run (`docs/results/columns-items-s33-h200.log`): 67108864 x 4
/// `f32` add 72.1% -> 88.2% of copy, `u32` max 71.9% -> 88.1%, 134217728 x 2 `f64` 72.5% ->
/// 89.4%, and at 32 MiB 2097152 x 4 `f32` 55.8% -> 69.0%; at 4 MiB (`columns-tall-s33-h200.log`)
/// 262144 x 4 50.8% -> 57.1%.
pub const fn columns_pipelined(arch: u32, rows: u64, cols: u64, elem_size: usize) -> bool {
    let _ = arch;
    let (row_bytes, bytes) = (cols * elem_size as u64, rows * cols * elem_size as u64);
    (row_bytes == 2 * VECTOR_BYTES as u64 && bytes >= PIPELINED_MIN_BYTES)
        || (row_bytes == VECTOR_BYTES as u64 && bytes >= PIPELINED_COLUMNS16_MIN_BYTES)
}

/// Smallest matrix of 16-byte rows that [`columns_pipelined`] scans as one pipelined scan of its
/// rows: 4 MiB, the smallest measured (smaller ones stay with the column tiles, unmeasured).
pub const PIPELINED_COLUMNS16_MIN_BYTES: u64 = 4 << 20;

/// Whether rows of `cols` elements of `elem_size` bytes are what a narrow-column kernel scans:
/// one or two 16-byte vectors.
pub const fn pipelined_column_rows(cols: u64, elem_size: usize) -> bool {
    let bytes = cols * elem_size as u64;
    bytes == VECTOR_BYTES as u64 || bytes == 2 * VECTOR_BYTES as u64
}

/// Whether the batched scan along few long rows (`rows` of `cols` elements) runs as one launch of
/// the pipelined kernel, each row a chain of its own tiles (`kernels::pipelined::pipeline` in
/// gpu/), rather than one chain of one-tile-per-block tiles per row: from [`PIPELINED_MIN_BYTES`]
/// in all where [`single_pass_pipelined`] would take the whole matrix, every row starting on a
/// 16-byte boundary (bulk copies) and at least [`PIPELINED_ROW_MIN_TILES`] tiles long. On the
/// H200, interleaved twice in one run against the build before (`docs/results/rows-columns-s19-h200.log`,
/// percent of a same-run copy): 8 x 2^25 `f32` 78.5-78.8% -> 87.9-88.0% (that build scanned rows
/// of 128 MiB one launch each, `docs/results/batched-pipe-s16-h200.log`), 16 x 2^24 `u32`
/// 72.9-73.0% -> 88.1%, 64 x 2^22 `f32` 72.1-72.2% -> 87.1-87.8%, 100 x 2684352 `f32` (a partial
/// tile ending each row) 72.2-72.4% -> 87.4-87.6%, 8 x 2^24 `f64` 79.9-80.1% -> 90.1-90.2% (the
/// others on the chains before).
pub fn long_rows_pipelined(arch: u32, ty: crate::ElemType, op: crate::Op, rows: u64, cols: u64) -> bool {
    let size = ty.size() as u64;
    let row_tiles = cols.div_ceil(pipeline_of(arch, ty, op).tile() as u64);
    (cols * size).is_multiple_of(VECTOR_BYTES as u64)
        && row_tiles >= PIPELINED_ROW_MIN_TILES
        && single_pass_pipelined(arch, ty, op, rows * cols)
}

/// Tiles a row needs for [`long_rows_pipelined`]: a row's last tile may be partial and goes
/// element by element, so short rows would waste much of each block's pipeline (not measured:
/// the rows above have 656 tiles and more).
pub const PIPELINED_ROW_MIN_TILES: u64 = 16;

/// The pipelined recurrence kernel's shape for maps of `map_size` bytes. `f64` pairs (16 bytes, a
/// 16-byte shuffle per warp-scan step and one element per vector): 20 KB tiles (10 maps per thread
/// of a reducing warp), two scanning warps per reducing warp, 5 stages, shares blocked (each lane a
/// run of 5 maps, one warp scan per share, the share out by one bulk copy). On the H200 at 2^27,
/// interleaved twice against the striped shape (16 KB tiles, a warp scan per row of maps;
/// `docs/results/trial-bulk-s17-h200.log`, trial 1): 63.7-63.8% -> 82.4-82.5% of copy; runs of 7
/// maps with one scanning warp 81.6-81.8%, of 3 maps 74.2-74.4%. Freeing each stage as soon as its
/// bulk copies have read it (`kernels::pipelined::pipeline` in gpu/): 81.7-82.0% -> 85.7-85.9%, interleaved
/// twice in one run (`compact-pipe-s18-h200.log`). `f32` (8-byte pairs) keeps the
/// striped shape with one scanning warp: 90.2-90.4% against 80.6-84.7% blocked in the same run.
pub const fn pipeline_recurrence(arch: u32, map_size: usize) -> Pipeline {
    if map_size == 16 {
        Pipeline { items: 10, split: 2, stages: 5, blocked: true, ..pipeline(arch, map_size) }
    } else {
        pipeline(arch, map_size)
    }
}

/// Whether the single-pass scan of `n` elements of `ty` with `op` runs as the pipelined kernel
/// ([`pipeline_of`]) by default: from [`PIPELINED_MIN_BYTES`] on, from [`PIPELINED_MIN_BYTES_U8`]
/// for `u8`, whose `mul` stays on the one-tile-per-block kernel (not measured). On the H200,
/// against the one-tile-per-block kernel in the same run (`docs/results/pipe-bench-s10-h200.log`):
/// at 2^28 `u32` 74.3% -> 89.2% of copy, `f32` 72.7% -> 88.2%, `u64` 74.3% -> 91.5%, `f64` 72.3% ->
/// 88.5%; at 64 MiB (`u32` 2^24, `f64` 2^23) about even; below it slower (a persistent grid of
/// 264 blocks with 6 stages each to start, for few tiles: `u32` 2^20 0.0139 against 0.0103 ms).
/// Min and max at 2^28 (`minmax-s10-h200.log`): `u32` max 87.4% (add 88.0%), `f32` 87.5%
/// against 72.4%, `u64` 89.2% against 74.6%; `f64` with two scanning warps 79.2-80.5% against
/// 71.1-71.8% (`pipe-split-s11-h200.log`). Narrow types (`pipe-narrow-s11-h200.log`): `u16` at
/// 2^26 (128 MiB) 70.7% -> 77.1% (add), 2^24 77.5% -> 72.5%; `u8` add at 2^28 69.9% -> 74.1%,
/// 2^26 69.9% -> 63.3%.
pub fn single_pass_pipelined(arch: u32, ty: crate::ElemType, op: crate::Op, n: u64) -> bool {
    let _ = arch;
    let bytes = n * ty.size() as u64;
    match ty {
        crate::ElemType::U8 => op != crate::Op::Mul && bytes >= PIPELINED_MIN_BYTES_U8,
        _ => bytes >= PIPELINED_MIN_BYTES,
    }
}

/// Whether the linear recurrence over `n` maps of `map_size` bytes runs as the pipelined kernel
/// ([`pipeline_recurrence`]) by default: from 64 MiB on. On the H200 in one run against the
/// staged kernel: `f32` 2^28 74.5-75.0% -> 87.1-87.3% of copy (`pipe-recurrence-s10-h200.log`);
/// `f64` pairs 2^27 58.3-58.5% -> 64.1-64.5%, 2^22 (64 MiB) 51.4-51.9% -> 58.9-59.3%
/// (`pipe-split-s11-h200.log`, `pipe-split4-s11-h200.log`).
pub const fn recurrence_pipelined(arch: u32, map_size: usize, n: u64) -> bool {
    let _ = arch;
    n * map_size as u64 >= PIPELINED_MIN_BYTES
}

/// The pipelined compaction's shape (`compact_pipe_<t>`): blocked shares of 5 vectors per lane
/// (20 `u32` or 10 `u64`), two scanning warps per reducing warp, so 20 KB tiles, 5 in flight,
/// each stage freed as soon as its shares' bulk copies have read it. On the H200 at 2^28 in one
/// run (`docs/results/compact-pipe3-s18-h200.log`, same-run CUB 0.598 / 0.972 ms for `u32` /
/// `u64`): 20 KB tiles 0.572-0.578 / 0.928-0.937 ms; 10 KB tiles with one scanning warp, 6 in
/// flight at 3 blocks per SM, 0.639-0.645 / 1.107-1.108 ms (7 in flight: the same or slower).
/// Freeing a stage only after the warp's next share (the pipelined kernel's rule before) cost a
/// stage: `u64` 1.038-1.044 against 0.952 ms in an earlier run (`compact-pipe2-s18-h200.log`).
pub const fn pipeline_compact(arch: u32, elem_size: usize) -> Pipeline {
    let items = 10 * vector_elems(elem_size);
    Pipeline { items, split: 2, stages: 5, blocked: true, ..pipeline(arch, elem_size) }
}

/// Whether the compaction of `n` elements of `elem_size` bytes kept by `pred`
/// (`crate::predicate`) runs in the pipelined kernel's roles (`compact_pipe_<t>`, shape
/// [`pipeline_compact`]) by default: 4- and 8-byte elements kept by a comparison, from
/// [`PIPELINED_MIN_BYTES`] on. On the H200 at 2^28, interleaved twice in one run against the
/// one-tile-per-block kernel and CUB's DeviceSelect::If (`docs/results/compact-pipe-s18-h200.log`):
/// `u32` > 3 0.572-0.579 against 0.597-0.602 ms (CUB 0.600: 1.04-1.05x), `f32` 0.573-0.581 against
/// 0.600-0.603 (CUB 0.600: 1.03-1.05x), `u64` 0.921 against 1.101-1.105 (CUB 0.965: 1.05x), `f64`
/// 0.923-0.927 against 1.103-1.104, `u32` non-zero 0.620-0.621 against 0.705-0.710. By flags it is
/// slower (`u64` 2.60-2.61 against 1.53-1.55 ms, `compact-pipe3-s18-h200.log`: every flag is read
/// twice, byte by byte, from global memory), so flags keep the one-tile-per-block kernel. Sizes
/// below 64 MiB were not measured; they keep it too, as the scans do.
pub const fn compact_pipelined(arch: u32, elem_size: usize, n: u64, pred: u32) -> bool {
    let _ = arch;
    matches!(elem_size, 4 | 8) && pred != crate::predicate::FLAGS && n * elem_size as u64 >= PIPELINED_MIN_BYTES
}

/// Smallest input the pipelined single-pass kernel takes by default (see
/// [`single_pass_pipelined`]).
pub const PIPELINED_MIN_BYTES: u64 = 64 << 20;

/// [`PIPELINED_MIN_BYTES`] for `u8`, whose pipelined kernel is bound by its arithmetic, not its
/// look-back: ahead of the one-tile-per-block kernel only from 2^28 elements.
pub const PIPELINED_MIN_BYTES_U8: u64 = 256 << 20;

/// Nanoseconds the single-pass look-back sleeps between polls of a tile that has not published
/// yet (0: poll at once). On the H200, 100 and 400 ns measured the same as 0 (within 1%).
pub const fn lookback_backoff_ns(arch: u32, elem_size: usize) -> u32 {
    let _ = (arch, elem_size);
    0
}

/// How many tiles ahead of its own a single-pass block asks the bulk-copy engine to bring into
/// L2 (0: none; `kernels::prefetch_tile_l2`), in the 4- to 16-byte register kernels and the staged
/// kernels (the packed 1- and 2-byte kernels and the batched rows do not prefetch). On the
/// H200 at 2^28 `u32` (4 blocks of 256 per SM, 528 resident), each in one run against none:
/// 33 tiles ahead +0.7-1.2 points of copy, 66 +1.1-1.6, 128-132 +1.6-2.2 (72.8% -> 74.4-75.0%,
/// 73.1% -> 74.7%), 198 +1.3-1.8, `f32` +0.9 at 132; 396 and more (a wave of blocks or more)
/// -5 to -12 points: the prefetched tiles are evicted before their blocks read them. At 128,
/// against the commit before in one run: 2^28 `u32` 0.704 -> 0.686-0.690 ms (72.9% -> 74.5-74.7%),
/// `i32` -3% time, `f32` -2%, `f32` deterministic -4.5%, 2^30 `u32` -3%, 2^24 unchanged. Then
/// also for 8- and 16-byte elements, in another run: staged `u64` 1.413 -> 1.360 ms (71.6% ->
/// 74.6%), staged `f64` 1.486 -> 1.398-1.402 ms (68.3% -> 72.7%), recurrence `f32` -4.2%,
/// recurrence `f64` -3.6%.
pub const fn single_pass_prefetch_tiles(arch: u32, elem_size: usize) -> u32 {
    let _ = (arch, elem_size);
    128
}

/// Stream compaction: how many tiles ahead a block prefetches its input into L2 (see
/// [`single_pass_prefetch_tiles`]). On the H200 at 2^28 in one run against none: `u32`
/// 0.678 -> 0.654-0.659 ms (74.8% -> 77.9% of the copy of the input), `f32` -3.3%, `u64` -3.5%.
pub const fn compact_prefetch_tiles(arch: u32, elem_size: usize) -> u32 {
    let _ = (arch, elem_size);
    128
}

/// Tiles each lane of the single-pass look-back inspects per round (a round covers 32 times as
/// many). On the H200 deeper windows were slower: 8-byte 2^28 at depth 1, 2, 4: 66.6%, 54.9%,
/// 50.6% of copy (more polls in flight, same chain).
pub const fn lookback_depth(arch: u32, elem_size: usize) -> usize {
    let _ = (arch, elem_size);
    1
}

/// Windows of `32 * depth` tiles whose aggregates the deterministic look-back holds while it
/// slides left before it waits for a prefix (in shared memory). On the H200 (2^28 f32),
/// waiting in the first window ran at 39% of copy.
pub const fn lookback_fixed_windows(arch: u32, elem_size: usize) -> usize {
    let _ = (arch, elem_size);
    8
}

/// Launch bounds for kernels whose register count would otherwise cost them a block per SM:
/// `(threads, blocks per SM)`, given to ptxas as `.maxntid` and `.minnctapersm`, which caps the
/// registers at what that many blocks leave. Only where ptxas then needs no local memory (sm_90,
/// ptxas 13.0): compaction of 4-byte types goes from 106 to 72 registers (2 -> 3 blocks of 256)
/// and of `u16` from 96 to 72 (1 -> 2 blocks of 384); the packed single-pass scan of `u8` from
/// 72-77 to 64 (3 -> 4 blocks), except min and max, which would spill (add and mul now spill 8
/// bytes: scanned a word at a time, add at 2^28 ran at 69.2% of copy bounded against 64.7%
/// without, in one run); the segmented scan of
/// 4-byte types and the short-row batched scans (their tables below). One exception spills: the
/// single-pass scan of `f32` at 4 blocks (72 -> 64 registers, 16 bytes of local memory; 8 in its
/// deterministic order), measured faster anyway on the H200 in one run against the same binary
/// without bounds: 2^28 add 0.703 against 0.734-0.740 ms (72.6% against 69.2-69.8% of copy), 2^30
/// 72.8% against 69.4%, deterministic 74.8% against 69.7-70.6%, max 72.1% against 69.8-69.9%.
/// Likewise the same kernel's add along few long rows (`batched_long_rows`, 8-16 bytes of
/// spills: 8 x 2^25 `f32` 67.9-68.2% -> 71.8-72.0% of copy, 16 x 2^24 `u32` 67.9-68.3% ->
/// 72.9-73.4%; `i32` add is the same code as `u32`) and the staged `f64` recurrence (16 bytes:
/// 2^27 56.2% -> 58.3%), each against the build with 3 blocks in one run.
/// Measured and left out because ptxas would spill: the segmented scan of 8-byte types at 3
/// blocks, the single-pass scan of `u16` and, mul, min and max at 4.
pub fn launch_bounds(arch: u32, kernel: &str) -> Option<(u32, u32)> {
    BOUNDED.iter().find_map(|&(table, shape)| blocks_in(table, shape, arch, kernel))
}

/// `kernel`'s (threads per block, blocks per SM) if `table` lists it.
fn blocks_in(table: BoundedTable, shape: ShapeOf, arch: u32, kernel: &str) -> Option<(u32, u32)> {
    let &(_, size, blocks) = table.iter().find(|(name, _, _)| kernel == *name)?;
    Some((shape(arch, size).threads, blocks))
}

/// A table of kernels with launch bounds: (kernel, element size, blocks per SM).
pub type BoundedTable = &'static [(&'static str, usize, u32)];

/// The tile shape a table's kernels take their threads from: (architecture, element size) -> shape.
pub type ShapeOf = fn(u32, usize) -> TileShape;

/// Every table of kernels with launch bounds, each with the tile shape its threads come from.
pub const BOUNDED: &[(BoundedTable, ShapeOf)] = &[
    (BOUNDED_COMPACT, compact),
    (BOUNDED_SORT, sort),
    (BOUNDED_SORT_COUNTS, sort_counts),
    (BOUNDED_SHORT_ROWS, short_rows),
    (BOUNDED_SEGMENTED, single_pass),
    (BOUNDED_SINGLE_PASS, single_pass),
    (BOUNDED_PIPELINED, pipeline_block),
    (BOUNDED_PIPELINED_SPLIT, pipeline_split_block),
    (BOUNDED_PIPELINED_SPLIT4, pipeline_split4_block),
    (BOUNDED_COLUMNS_PIPELINED, pipeline_columns_block),
    (BOUNDED_COLUMNS_PIPELINED16, pipeline_columns16_block),
    (BOUNDED_ROWS_PIPELINED, pipeline_block),
];

/// The pipelined kernels' block as a [`ShapeOf`] (threads only; launch bounds need no more).
pub const fn pipeline_block(arch: u32, elem_size: usize) -> TileShape {
    TileShape { threads: pipeline(arch, elem_size).threads(), items: 1 }
}

/// [`pipeline_block`] for [`pipeline_split4`].
pub const fn pipeline_split4_block(arch: u32, elem_size: usize) -> TileShape {
    TileShape { threads: pipeline_split4(arch, elem_size).threads(), items: 1 }
}

/// [`pipeline_block`] for [`pipeline_columns`].
pub const fn pipeline_columns_block(arch: u32, elem_size: usize) -> TileShape {
    TileShape { threads: pipeline_columns(arch, elem_size).threads(), items: 1 }
}

/// [`pipeline_block`] for [`pipeline_columns16`].
pub const fn pipeline_columns16_block(arch: u32, elem_size: usize) -> TileShape {
    TileShape { threads: pipeline_columns16(arch, elem_size).threads(), items: 1 }
}

/// [`pipeline_block`] for [`pipeline_split`], the shape [`pipeline_of`] gives heavy scans.
pub const fn pipeline_split_block(arch: u32, elem_size: usize) -> TileShape {
    TileShape { threads: pipeline_split(arch, elem_size).threads(), items: 1 }
}

/// The compaction kernels with launch bounds: (kernel, element size, blocks per SM). 4 blocks of
/// 256 for 4- and 8-byte types (63 registers, no local memory; 3 blocks before): on the H200 at
/// 2^28 in one run against 3 blocks, `u32` 0.653-0.656 -> 0.595 ms (0.90x -> 0.99x CUB's
/// DeviceSelect::If), `f32` 0.653-0.654 -> 0.595-0.596 ms (0.99x), `u64` 1.196-1.199 ->
/// 1.091-1.096 ms (0.79x -> 0.87x).
pub const BOUNDED_COMPACT: &[(&str, usize, u32)] = &[
    ("compact_u32", 4, 4),
    ("compact_i32", 4, 4),
    ("compact_f32", 4, 4),
    ("compact_u16", 2, 2),
    ("compact_u64", 8, 4),
    ("compact_i64", 8, 4),
    ("compact_f64", 8, 4),
];

/// The radix sort passes with launch bounds: (kernel, key size, blocks per SM). 8-byte keys
/// only: 3 blocks of 384 threads (56 registers; unbounded they take 64-72), with some spills
/// ([`MEASURED_SPILLS`]): since the keys are staged as they are ranked, no ranks stay in
/// registers. On the H200 in one run against the same kernel at 2 blocks (73 registers, no
/// spills), 2^28 keys: `u32` 6.24 against 6.47 ms, `f32` 6.53 against 7.29; 16 keys a thread at 3
/// blocks were slower (`u32` 6.94, `f32` 6.76; `docs/results/sort-early-ab-s25-h200.log`). The
/// 4-byte keys-only passes run 3 blocks without bounds ([`UNBOUNDED_SORT`]). With values: 2
/// blocks (70-72 registers since their ballot ranking, the ranks kept for the values; 3 blocks
/// would allow 56).
pub const BOUNDED_SORT: &[(&str, usize, u32)] = &[
    ("sort_pass_u64", 8, 3),
    ("sort_pass_i64", 8, 3),
    ("sort_pass_f64", 8, 3),
    ("sort_pass_values_u32", 4, 2),
    ("sort_pass_values_i32", 4, 2),
    ("sort_pass_values_f32", 4, 2),
    ("sort_pass_values_u64", 8, 2),
    ("sort_pass_values_i64", 8, 2),
    ("sort_pass_values_f64", 8, 2),
];

/// Radix sort passes left without launch bounds that must still fit 3 blocks of 384 threads per
/// SM (56 registers or fewer, checked by ptxas in `tests/tests/ptx.rs`): (kernel, key size,
/// blocks per SM). ptxas assembles the 4-byte keys-only passes in 46-48 registers without spills
/// when left free, but at 56 registers with 32-80 bytes of spills under the bound of 3 blocks
/// (the same with `.maxnreg 56`; a cap of 50 spilled too). `i32` and `f32` fit so only since
/// their digits are taken from the raw key bits (`onesweep::digit`). On the H200 in one run at
/// 2^28 against main (`docs/results/sort-keys4-s27-h200.log`): `u32` 5.466 against 5.636 ms,
/// `f32` 5.800 against 6.077, `i32` 5.480 against 6.139; `u32` keys of 8 random bits 3.50
/// against 3.80 (`sort-packed-s27-h200.log`).
pub const UNBOUNDED_SORT: &[(&str, usize, u32)] =
    &[("sort_pass_u32", 4, 3), ("sort_pass_i32", 4, 3), ("sort_pass_f32", 4, 3)];

/// The (threads per block, blocks per SM) that `kernel`, left without launch bounds, must fit.
pub fn unbounded_fit(arch: u32, kernel: &str) -> Option<(u32, u32)> {
    blocks_in(UNBOUNDED_SORT, sort, arch, kernel)
}

/// Whether `s` begins with `prefix` (for the checks made at compile time).
const fn starts_with(s: &str, prefix: &str) -> bool {
    let (s, p) = (s.as_bytes(), prefix.as_bytes());
    if s.len() < p.len() {
        return false;
    }
    let mut i = 0;
    while i < p.len() {
        if s[i] != p[i] {
            return false;
        }
        i += 1;
    }
    true
}

/// Shared memory an SM of compute capability 9.0 offers its blocks, and what it keeps back for each.
pub const SM90_SHARED_BYTES: u32 = 228 * 1024;
pub const SM90_SHARED_RESERVED_PER_BLOCK: u32 = 1024;

// Every sort pass's blocks per SM, bounded or not, must leave room for their shared memory
// (the keys-only pass of 4-byte keys, with its match words, takes about 200 KB at 3 blocks), or
// a bound would only cost registers.
const _: () = assert!(sort_passes_fit_shared(BOUNDED_SORT) && sort_passes_fit_shared(UNBOUNDED_SORT));

/// Whether every sort pass in `table` leaves shared memory for its blocks per SM.
const fn sort_passes_fit_shared(table: BoundedTable) -> bool {
    let mut k = 0;
    while k < table.len() {
        let (name, size, blocks) = table[k];
        let values = starts_with(name, crate::names::SORT_PASS_VALUES);
        let smem = crate::layout::sort_pass_smem(DEFAULT_ARCH, size, values);
        if blocks * (smem + SM90_SHARED_RESERVED_PER_BLOCK) > SM90_SHARED_BYTES {
            return false;
        }
        k += 1;
    }
    true
}

/// The radix sort digit counting with launch bounds: (kernel, key size, blocks per SM), the one
/// block of 1024 threads its shared memory leaves room for.
pub const BOUNDED_SORT_COUNTS: &[(&str, usize, u32)] = &[
    ("sort_counts_u32", 4, 1),
    ("sort_counts_i32", 4, 1),
    ("sort_counts_f32", 4, 1),
    ("sort_counts_u64", 8, 1),
    ("sort_counts_i64", 8, 1),
    ("sort_counts_f64", 8, 1),
];

/// The short-row scans with launch bounds: (kernel, element size, blocks per SM). Unbounded, the
/// 4-byte kernels took 80-117 registers (2-3 blocks of 256) and the 8-byte ones 71-87; bounded,
/// 64 and at most 80, with no local memory (ptxas 13.0). The H200 figures of this kernel
/// (83-86% of copy for rows of 8 to 4096 f32) are with these bounds; unbounded was not timed.
pub const BOUNDED_SHORT_ROWS: &[(&str, usize, u32)] = &[
    ("batched_short_rows_u32_add", 4, 4),
    ("batched_short_rows_u32_mul", 4, 4),
    ("batched_short_rows_u32_min", 4, 4),
    ("batched_short_rows_u32_max", 4, 4),
    ("batched_short_rows_i32_add", 4, 4),
    ("batched_short_rows_i32_mul", 4, 4),
    ("batched_short_rows_i32_min", 4, 4),
    ("batched_short_rows_i32_max", 4, 4),
    ("batched_short_rows_f32_add", 4, 4),
    ("batched_short_rows_f32_mul", 4, 4),
    ("batched_short_rows_f32_min", 4, 4),
    ("batched_short_rows_f32_max", 4, 4),
    ("batched_short_rows_u64_add", 8, 3),
    ("batched_short_rows_u64_mul", 8, 3),
    ("batched_short_rows_u64_min", 8, 3),
    ("batched_short_rows_u64_max", 8, 3),
    ("batched_short_rows_i64_add", 8, 3),
    ("batched_short_rows_i64_mul", 8, 3),
    ("batched_short_rows_i64_min", 8, 3),
    ("batched_short_rows_i64_max", 8, 3),
    ("batched_short_rows_f64_add", 8, 3),
    ("batched_short_rows_f64_mul", 8, 3),
    ("batched_short_rows_f64_min", 8, 3),
    ("batched_short_rows_f64_max", 8, 3),
];

/// The segmented scans with launch bounds: (kernel, element size, blocks per SM). With the heads
/// in one bit mask per thread, the 4-byte kernels fit 3 blocks of 256 (80 registers instead of
/// 105-108) with no local memory; the 8-byte ones (104-112) would spill 56-124 bytes there.
pub const BOUNDED_SEGMENTED: &[(&str, usize, u32)] = &[
    ("segmented_u32_add", 4, 3),
    ("segmented_u32_mul", 4, 3),
    ("segmented_u32_min", 4, 3),
    ("segmented_u32_max", 4, 3),
    ("segmented_i32_add", 4, 3),
    ("segmented_i32_mul", 4, 3),
    ("segmented_i32_min", 4, 3),
    ("segmented_i32_max", 4, 3),
    ("segmented_f32_add", 4, 3),
    ("segmented_f32_mul", 4, 3),
    ("segmented_f32_min", 4, 3),
    ("segmented_f32_max", 4, 3),
];

/// Kernels whose launch bounds cost local memory, measured faster anyway (see [`launch_bounds`]):
/// (kernel, most bytes of stack frame, spill stores or spill loads ptxas 13.0 may report). Every
/// other kernel must need none (`tests/tests/ptx.rs`).
pub const MEASURED_SPILLS: &[(&str, u32)] = &[
    ("single_pass_f32_add", 16),
    ("single_pass_f32_mul", 16),
    // 24 since the idempotent warp scan (session 14): 24-byte frame, 20 bytes of spills.
    ("single_pass_f32_min", 24),
    ("single_pass_f32_max", 24),
    ("single_pass_det_f32_add", 8),
    ("single_pass_det_f32_mul", 8),
    ("single_pass_u8_add", 8),
    ("single_pass_u8_mul", 8),
    ("batched_long_rows_u32_add", 8),
    ("batched_long_rows_i32_add", 8),
    ("batched_long_rows_f32_add", 16),
    ("recurrence_staged_f64", 16),
    // 8-byte keys-only sort passes at 3 blocks per SM (`BOUNDED_SORT`): the ranking's keys,
    // reloaded (32 since their ballot ranking, session 26).
    ("sort_pass_u64", 32),
    ("sort_pass_i64", 32),
    ("sort_pass_f64", 32),
];

/// The single-pass kernels with launch bounds: (kernel, element size, blocks per SM).
pub const BOUNDED_SINGLE_PASS: &[(&str, usize, u32)] = &[
    ("single_pass_u8_add", 1, 4),
    ("single_pass_u8_mul", 1, 4),
    ("single_pass_u8_and", 1, 4),
    ("single_pass_u8_or", 1, 4),
    ("single_pass_u8_xor", 1, 4),
    ("single_pass_f32_add", 4, 4),
    ("single_pass_f32_mul", 4, 4),
    ("single_pass_f32_min", 4, 4),
    ("single_pass_f32_max", 4, 4),
    ("single_pass_det_f32_add", 4, 4),
    ("single_pass_det_f32_mul", 4, 4),
    ("batched_long_rows_u32_add", 4, 4),
    ("batched_long_rows_i32_add", 4, 4),
    ("batched_long_rows_f32_add", 4, 4),
    ("recurrence_staged_f64", 16, 4),
];

/// The pipelined kernels of one scanning warp per reducing warp with launch bounds: (kernel,
/// element size, blocks per SM). 4-byte types unbounded take 66-72 registers, 2 blocks of 320
/// threads; bounded, 64 with no local memory, which leaves 3 blocks to shapes of up to 4 stages,
/// where shared memory fits 3. `u8`'s (34-63 registers) are bounded to the 2 blocks that shared
/// memory fits.
pub const BOUNDED_PIPELINED: &[(&str, usize, u32)] = &[
    ("single_pass_pipe_u32_add", 4, 3),
    ("single_pass_pipe_u32_mul", 4, 3),
    ("single_pass_pipe_u32_min", 4, 3),
    ("single_pass_pipe_u32_max", 4, 3),
    ("single_pass_pipe_u32_and", 4, 3),
    ("single_pass_pipe_u32_or", 4, 3),
    ("single_pass_pipe_u32_xor", 4, 3),
    ("single_pass_pipe_i32_add", 4, 3),
    ("single_pass_pipe_i32_mul", 4, 3),
    ("single_pass_pipe_i32_min", 4, 3),
    ("single_pass_pipe_i32_max", 4, 3),
    ("single_pass_pipe_i32_and", 4, 3),
    ("single_pass_pipe_i32_or", 4, 3),
    ("single_pass_pipe_i32_xor", 4, 3),
    ("single_pass_pipe_f32_add", 4, 3),
    ("single_pass_pipe_f32_mul", 4, 3),
    ("single_pass_pipe_f32_min", 4, 3),
    ("single_pass_pipe_f32_max", 4, 3),
    ("single_pass_pipe_u8_mul", 1, 2),
    ("single_pass_pipe_u8_and", 1, 2),
    ("single_pass_pipe_u8_or", 1, 2),
    ("single_pass_pipe_u8_xor", 1, 2),
];

/// The batched scans along few long rows in one pipelined launch (`batched_rows_pipe_<t>_<op>`,
/// [`long_rows_pipelined`]), bounded as their single-scan forms in [`BOUNDED_PIPELINED`].
pub const BOUNDED_ROWS_PIPELINED: &[(&str, usize, u32)] = &[
    ("batched_rows_pipe_u32_add", 4, 3),
    ("batched_rows_pipe_u32_mul", 4, 3),
    ("batched_rows_pipe_u32_min", 4, 3),
    ("batched_rows_pipe_u32_max", 4, 3),
    ("batched_rows_pipe_i32_add", 4, 3),
    ("batched_rows_pipe_i32_mul", 4, 3),
    ("batched_rows_pipe_i32_min", 4, 3),
    ("batched_rows_pipe_i32_max", 4, 3),
    ("batched_rows_pipe_f32_add", 4, 3),
    ("batched_rows_pipe_f32_mul", 4, 3),
    ("batched_rows_pipe_f32_min", 4, 3),
    ("batched_rows_pipe_f32_max", 4, 3),
];

/// The pipelined kernels with two scanning warps per reducing warp ([`pipeline_of`]) that need
/// launch bounds for 2 blocks of 448 threads per SM (shared memory fits no more): `u8` min and
/// max take 95-126 registers unbounded.
pub const BOUNDED_PIPELINED_SPLIT: &[(&str, usize, u32)] =
    &[("single_pass_pipe_u8_min", 1, 2), ("single_pass_pipe_u8_max", 1, 2)];

/// The kernels of [`pipeline_split4`] bounded to 2 blocks of 704 threads per SM (56-60 registers
/// unbounded, one block; bounded, 40 without local memory).
pub const BOUNDED_PIPELINED_SPLIT4: &[(&str, usize, u32)] =
    &[("single_pass_pipe_u8_add", 1, 2), ("single_pass_pipesplit4_u16_add", 2, 2)];

/// The pipelined narrow-column scans ([`pipeline_columns`]), bounded to the 2 blocks of 320
/// threads per SM that their shared memory allows (4-byte elements take 118-168 registers
/// unbounded, one block per SM).
pub const BOUNDED_COLUMNS_PIPELINED: &[(&str, usize, u32)] = &[
    ("batched_columns_pipe_u32_add", 4, 2),
    ("batched_columns_pipe_u32_mul", 4, 2),
    ("batched_columns_pipe_u32_min", 4, 2),
    ("batched_columns_pipe_u32_max", 4, 2),
    ("batched_columns_pipe_i32_add", 4, 2),
    ("batched_columns_pipe_i32_mul", 4, 2),
    ("batched_columns_pipe_i32_min", 4, 2),
    ("batched_columns_pipe_i32_max", 4, 2),
    ("batched_columns_pipe_f32_add", 4, 2),
    ("batched_columns_pipe_f32_mul", 4, 2),
    ("batched_columns_pipe_f32_min", 4, 2),
    ("batched_columns_pipe_f32_max", 4, 2),
    ("batched_columns_pipe_u64_add", 8, 2),
    ("batched_columns_pipe_u64_mul", 8, 2),
    ("batched_columns_pipe_u64_min", 8, 2),
    ("batched_columns_pipe_u64_max", 8, 2),
    ("batched_columns_pipe_i64_add", 8, 2),
    ("batched_columns_pipe_i64_mul", 8, 2),
    ("batched_columns_pipe_i64_min", 8, 2),
    ("batched_columns_pipe_i64_max", 8, 2),
    ("batched_columns_pipe_f64_add", 8, 2),
    ("batched_columns_pipe_f64_mul", 8, 2),
    ("batched_columns_pipe_f64_min", 8, 2),
    ("batched_columns_pipe_f64_max", 8, 2),
];

/// The pipelined scans of 16-byte rows ([`pipeline_columns16`]), bounded like
/// [`BOUNDED_COLUMNS_PIPELINED`] to the 2 blocks of 320 threads per SM their shared memory allows.
pub const BOUNDED_COLUMNS_PIPELINED16: &[(&str, usize, u32)] = &[
    ("batched_columns_pipe16_u32_add", 4, 2),
    ("batched_columns_pipe16_u32_mul", 4, 2),
    ("batched_columns_pipe16_u32_min", 4, 2),
    ("batched_columns_pipe16_u32_max", 4, 2),
    ("batched_columns_pipe16_i32_add", 4, 2),
    ("batched_columns_pipe16_i32_mul", 4, 2),
    ("batched_columns_pipe16_i32_min", 4, 2),
    ("batched_columns_pipe16_i32_max", 4, 2),
    ("batched_columns_pipe16_f32_add", 4, 2),
    ("batched_columns_pipe16_f32_mul", 4, 2),
    ("batched_columns_pipe16_f32_min", 4, 2),
    ("batched_columns_pipe16_f32_max", 4, 2),
    ("batched_columns_pipe16_u64_add", 8, 2),
    ("batched_columns_pipe16_u64_mul", 8, 2),
    ("batched_columns_pipe16_u64_min", 8, 2),
    ("batched_columns_pipe16_u64_max", 8, 2),
    ("batched_columns_pipe16_i64_add", 8, 2),
    ("batched_columns_pipe16_i64_mul", 8, 2),
    ("batched_columns_pipe16_i64_min", 8, 2),
    ("batched_columns_pipe16_i64_max", 8, 2),
    ("batched_columns_pipe16_f64_add", 8, 2),
    ("batched_columns_pipe16_f64_mul", 8, 2),
    ("batched_columns_pipe16_f64_min", 8, 2),
    ("batched_columns_pipe16_f64_max", 8, 2),
];

/// Hierarchical (multi-kernel) strategy: every block algorithm scans `threads` partials.
pub const fn hierarchical(arch: u32, elem_size: usize) -> TileShape {
    let _ = (arch, elem_size);
    TileShape { threads: 256, items: 8 }
}

/// Threads per block of the naive O(n^2) kernel.
pub const NAIVE_THREADS: u32 = 256;

/// Largest input the naive O(n^2) strategy accepts: about 3.4e10 element reads, well under a
/// second on an H100-class GPU; beyond that it is a minutes-long way to learn nothing new.
pub const NAIVE_MAX_N: u64 = 1 << 18;

/// Largest input a traced (one-block, one element per thread) scan accepts.
pub const TRACE_MAX_N: u32 = 1024;

/// The architecture the kernels are built for unless told otherwise.
pub const DEFAULT_ARCH: u32 = 90;
