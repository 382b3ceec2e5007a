//! Planning a batched scan of a row-major `rows × cols` matrix along either axis (kernels in
//! `gpu/src/kernels/batched.rs` and `pipelined/`), each one pass over the data:
//!
//! - down the columns: pipelined scans of rows of 16 or 32 bytes; for few rows, one thread per
//!   vector of columns walking every row; otherwise column tiles with a look-back per column,
//!   scalar, of 16-byte vectors, or brought into shared memory by bulk copies;
//! - along the rows: short rows as tiles of whole rows; many long rows one block each; few long
//!   rows one chain of tiles each, or one pipelined launch.
//!
//! A single row or column is a plain scan.

use super::scan::{self, persistent_launch, ScanPlan, ScanRequest, SinglePass};
use super::{gcd, per_tile, scan_flags, Claims, Launch, TileState};
use crate::error::{Error, Result};
use crate::options::{Axis, BatchedKernel, Matrix};
use scan_abi::kernel::{ARITHMETIC_OPS, WIDE_TYPES};
use scan_abi::shape::{vector_elems, Tile, VECTOR_BYTES};
use scan_abi::tuning::Tuning;
use scan_abi::{smem, ElemType, Family, Kernel, Op};

/// A batched scan as the planner sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BatchedRequest {
    pub ty: ElemType,
    pub op: Op,
    pub exclusive: bool,
    pub matrix: Matrix,
    pub axis: Axis,
    pub kernel: BatchedKernel,
    /// Input and output start on 16-byte boundaries.
    pub aligned: bool,
}

/// How the batched scan runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BatchedPlan {
    /// One row or one column.
    Scan(ScanPlan),
    /// Column tiles: the kernel's strip argument (columns, or threads per row for vectors), the
    /// two arguments only the tiles in shared memory take (rows per thread group, tiles ahead).
    ColumnTiles {
        launch: Launch,
        arg: u32,
        bulk: Option<(u32, u32)>,
        state: TileState,
        flags: u32,
    },
    ColumnVectors {
        launch: Launch,
        flags: u32,
    },
    /// One pipelined scan of 16- or 32-byte rows (its flags and stages inside).
    ColumnsPipelined(SinglePass),
    ShortRows {
        launch: Launch,
        rows_per_tile: u64,
        flags: u32,
    },
    RowBlocks {
        launch: Launch,
        flags: u32,
    },
    RowChains {
        launch: Launch,
        tiles_per_row: u32,
        state: TileState,
        flags: u32,
    },
    /// One pipelined launch, each row a chain of its own tiles (the row length its last argument).
    RowsPipelined(SinglePass),
}

impl BatchedPlan {
    /// The family of the kernel that does the work (`None`: nothing to launch).
    pub fn family(&self) -> Option<Family> {
        match self {
            BatchedPlan::Scan(s) => s.family(),
            BatchedPlan::ColumnTiles { launch, .. }
            | BatchedPlan::ColumnVectors { launch, .. }
            | BatchedPlan::ShortRows { launch, .. }
            | BatchedPlan::RowBlocks { launch, .. }
            | BatchedPlan::RowChains { launch, .. } => Some(launch.kernel.family),
            BatchedPlan::ColumnsPipelined(s) | BatchedPlan::RowsPipelined(s) => Some(s.launch.kernel.family),
        }
    }

    /// Bytes of temporary storage: (tile state, scratch).
    pub fn temp_bytes(&self) -> (u64, u64) {
        match self {
            BatchedPlan::Scan(s) => s.temp_bytes(),
            BatchedPlan::ColumnTiles { state, .. } | BatchedPlan::RowChains { state, .. } => (state.bytes(), 0),
            BatchedPlan::ColumnsPipelined(s) | BatchedPlan::RowsPipelined(s) => (s.state.bytes(), 0),
            BatchedPlan::ColumnVectors { .. } | BatchedPlan::ShortRows { .. } | BatchedPlan::RowBlocks { .. } => (0, 0),
        }
    }
}

/// An error unless the batched kernels are built for `op` over `ty`.
pub fn supported(ty: ElemType, op: Op, what: &str) -> Result<()> {
    if ARITHMETIC_OPS.contains(&op) && WIDE_TYPES.contains(&ty) {
        return Ok(());
    }
    Err(Error::invalid(format!(
        "{what} scans are built for add, mul, min and max on 32- and 64-bit types, not {} on {}",
        op.name(),
        ty.name()
    )))
}

/// Plans `req`.
pub fn plan(t: &Tuning, req: &BatchedRequest) -> Result<BatchedPlan> {
    supported(req.ty, req.op, "batched")?;
    let Matrix { rows, cols } = req.matrix;
    let n = rows.checked_mul(cols).ok_or_else(|| {
        Error::out_of_range(format!("the elements of a {rows} x {cols} matrix"), "beyond 2^64", "below 2^64")
    })?;
    // Every product of the matrix's sizes below is at most its bytes.
    n.checked_mul(req.ty.size() as u64).ok_or_else(|| {
        Error::out_of_range(
            format!("the bytes of a {rows} x {cols} {} matrix", req.ty.name()),
            "beyond 2^64",
            "below 2^64",
        )
    })?;
    let single = match req.axis {
        Axis::Columns => cols == 1,
        Axis::Rows => rows == 1,
    };
    if n == 0 || single {
        let scan =
            ScanRequest { exclusive: req.exclusive, aligned: req.aligned, ..ScanRequest::new(req.ty, req.op, n) };
        return scan::plan(t, &scan).map(BatchedPlan::Scan);
    }
    let wrong_axis = |k: BatchedKernel| {
        let other = if req.axis == Axis::Rows { "columns" } else { "rows" };
        Err(Error::invalid(format!("the {} kernel scans {other}, not {}", k.name(), req.axis.name())))
    };
    match (req.axis, req.kernel) {
        (
            Axis::Rows,
            k @ (BatchedKernel::ColumnTiles
            | BatchedKernel::VectorTiles
            | BatchedKernel::BulkTiles
            | BatchedKernel::ColumnVectors),
        ) => wrong_axis(k),
        (Axis::Columns, k @ (BatchedKernel::ShortRows | BatchedKernel::RowBlocks | BatchedKernel::RowChains)) => {
            wrong_axis(k)
        }
        (Axis::Columns, _) => columns(t, req),
        (Axis::Rows, _) => rows_plan(t, req),
    }
}

fn cannot(kernel: BatchedKernel, req: &BatchedRequest, why: &str) -> Error {
    let Matrix { rows, cols } = req.matrix;
    Error::invalid(format!(
        "the {} kernel cannot scan a {rows} x {cols} {} matrix: {why}",
        kernel.name(),
        req.ty.name()
    ))
}

fn columns(t: &Tuning, req: &BatchedRequest) -> Result<BatchedPlan> {
    let (ty, size) = (req.ty, req.ty.size());
    let Matrix { rows, cols } = req.matrix;
    let flags = scan_flags(req.exclusive, false);
    let kernel = |family| Kernel::new(family, ty, req.op);
    let pipelined = match req.kernel {
        BatchedKernel::Pipelined if !pipelined_column_rows(cols, size) => {
            return Err(cannot(req.kernel, req, "its rows are not of 16 or 32 bytes"))
        }
        BatchedKernel::Pipelined => true,
        BatchedKernel::Auto => uses_columns_pipelined(t, rows, cols, size),
        _ => false,
    };
    if pipelined {
        let row_bytes = cols as usize * size;
        let (family, p) = if row_bytes == VECTOR_BYTES {
            (Family::BatchedColumnsPipelined16, t.shapes.columns16_pipeline.at(size))
        } else {
            (Family::BatchedColumnsPipelined, t.shapes.columns_pipeline.at(size))
        };
        // The tiles are the matrix's elements in tiles of the shape's (whole rows each).
        let tiles = (rows * cols).div_ceil(p.tile() as u64);
        let backoff = t.choices.lookback_backoff_ns;
        return persistent_launch(t, kernel(family), p, tiles, size, row_bytes, flags, backoff)
            .map(BatchedPlan::ColumnsPipelined);
    }
    let vectors = match req.kernel {
        BatchedKernel::ColumnVectors if !uses_column_vectors(t, rows) => {
            return Err(cannot(req.kernel, req, "it has more rows than one batch"))
        }
        BatchedKernel::ColumnVectors => true,
        BatchedKernel::Auto => uses_column_vectors(t, rows),
        _ => false,
    };
    if vectors {
        let threads = t.shapes.column_vectors.threads;
        let count = cols.div_ceil((t.shapes.column_vector_bytes.at(size) / size) as u64);
        let blocks = count.div_ceil(threads as u64).min(t.choices.row_kernel_max_blocks);
        let launch = per_tile(kernel(Family::BatchedColumnVectors), blocks, threads, 0);
        return Ok(BatchedPlan::ColumnVectors { launch, flags });
    }
    let bulk = match req.kernel {
        BatchedKernel::BulkTiles => Some(column_bulk_tiles(t, rows, cols, size, req.aligned).ok_or_else(|| {
            cannot(
                req.kernel,
                req,
                "its rows are not a power of two of 16-byte vectors on 16-byte boundaries, or fit one tile",
            )
        })?),
        BatchedKernel::Auto => column_bulk_plan(t, rows, cols, size, req.aligned),
        _ => None,
    };
    let rows_aligned = req.aligned && (cols * size as u64).is_multiple_of(VECTOR_BYTES as u64);
    let vector_tiles = match req.kernel {
        BatchedKernel::VectorTiles if !rows_aligned => {
            return Err(cannot(req.kernel, req, "its rows do not start on 16-byte boundaries"))
        }
        BatchedKernel::VectorTiles => true,
        BatchedKernel::Auto => rows_aligned && t.choices.vector_column_tiles.at(size),
        _ => false,
    };
    let (family, strip, arg, bulk_args, tile_rows, smem, threads) = if let Some(b) = bulk {
        let smem = smem::columns_bulk(&t.shapes, size, b.rows);
        let bulk_args = Some((b.rows, t.choices.bulk_ahead));
        (Family::BatchedColumnsBulk, cols, b.tpr, bulk_args, b.tile_rows, smem, t.shapes.columns_bulk_threads)
    } else if vector_tiles {
        let VectorStrips { tpr, tile_rows } = column_vec_plan(t, rows, cols, size);
        let strip = tpr as u64 * vector_elems(size) as u64;
        let family = if column_lookback_window(t, cols.div_ceil(strip), size) == 4 {
            Family::BatchedColumnsVecW4
        } else {
            Family::BatchedColumnsVec
        };
        (family, strip, tpr, None, tile_rows, smem::columns_vec(&t.shapes, size), t.shapes.columns_vec.threads)
    } else {
        let ColumnStrips { strip, tile_rows, .. } = column_plan(t, rows, cols, size);
        let (smem, threads) = (smem::columns(&t.shapes, size), t.shapes.columns.at(size).threads);
        (Family::BatchedColumns, strip as u64, strip, None, tile_rows, smem, threads)
    };
    let chunks = rows.div_ceil(tile_rows);
    let count = chunks * cols.div_ceil(strip);
    // One status word per (row block, column); tiles that hold every row claim no tile index.
    let claims = if chunks == 1 { 0 } else { count };
    let state = TileState { slots: chunks * cols, value_bytes: size, claims: Claims::Tiles(claims) }.checked()?;
    let launch = per_tile(kernel(family), count, threads, smem);
    Ok(BatchedPlan::ColumnTiles { launch, arg, bulk: bulk_args, state, flags })
}

fn rows_plan(t: &Tuning, req: &BatchedRequest) -> Result<BatchedPlan> {
    let (ty, size) = (req.ty, req.ty.size());
    let Matrix { rows, cols } = req.matrix;
    let flags = scan_flags(req.exclusive, false);
    let kernel = |family| Kernel::new(family, ty, req.op);
    let short = short_rows_per_tile(t, cols, size);
    let choice = match req.kernel {
        BatchedKernel::ShortRows if short.is_none() => {
            return Err(cannot(req.kernel, req, "its rows are longer than a tile"))
        }
        BatchedKernel::Pipelined if !(cols * size as u64).is_multiple_of(VECTOR_BYTES as u64) => {
            return Err(cannot(req.kernel, req, "its rows do not start on 16-byte boundaries"))
        }
        BatchedKernel::Auto if short.is_some() => BatchedKernel::ShortRows,
        BatchedKernel::Auto if uses_row_kernel(t, rows, cols, size) => BatchedKernel::RowBlocks,
        BatchedKernel::Auto if long_rows_pipelined(t, rows, cols, ty, req.op) => BatchedKernel::Pipelined,
        BatchedKernel::Auto => BatchedKernel::RowChains,
        k => k,
    };
    match choice {
        BatchedKernel::ShortRows => {
            let rows_per_tile = short.expect("checked above");
            let threads = t.shapes.rows.at(size).threads;
            let tiles = rows.div_ceil(rows_per_tile).min(t.choices.row_kernel_max_blocks);
            let launch = per_tile(kernel(Family::BatchedShortRows), tiles, threads, smem::short_rows(&t.shapes, size));
            Ok(BatchedPlan::ShortRows { launch, rows_per_tile, flags })
        }
        BatchedKernel::RowBlocks => {
            let blocks = rows.min(t.choices.row_kernel_max_blocks);
            let threads = t.shapes.rows.at(size).threads;
            Ok(BatchedPlan::RowBlocks {
                launch: per_tile(kernel(Family::BatchedRows), blocks, threads, smem::rows(&t.shapes, size)),
                flags,
            })
        }
        BatchedKernel::Pipelined => {
            let p = t.shapes.scan_pipeline_of(ty, req.op);
            let tiles = rows * cols.div_ceil(p.tile() as u64);
            let backoff = t.choices.lookback_backoff_ns;
            persistent_launch(t, kernel(Family::BatchedRowsPipelined), p, tiles, size, size, flags, backoff)
                .map(BatchedPlan::RowsPipelined)
        }
        _ => {
            let tile = t.shapes.single_pass.at(size);
            let per_row = cols.div_ceil(tile.tile() as u64);
            let state = TileState::per_tile(rows * per_row, size)?;
            let tiles_per_row =
                u32::try_from(per_row).map_err(|_| Error::out_of_range("the tiles of a row", per_row, "below 2^32"))?;
            let smem = smem::single_pass(&t.shapes, size);
            let launch = per_tile(kernel(Family::BatchedLongRows), rows * per_row, tile.threads, smem);
            Ok(BatchedPlan::RowChains { launch, tiles_per_row, state, flags })
        }
    }
}

/// How the scalar column tiles lay out a matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ColumnStrips {
    /// Columns a strip (a tile's width).
    pub strip: u32,
    /// Thread groups a tile, each `strip` threads.
    pub groups: u32,
    /// Rows a tile.
    pub tile_rows: u64,
}

/// How the vector column tiles lay out a matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VectorStrips {
    /// Threads a row of a strip, each one 16-byte vector.
    pub tpr: u32,
    /// Rows a tile.
    pub tile_rows: u64,
}

/// How the scalar column tiles lay out a `rows × cols` matrix of `elem_size`-byte elements. Strips split the columns as evenly as
/// the widest strip allows (the tuning's), widened when fewer groups than it leaves already
/// cover every row, so that no group idles.
pub fn column_plan(t: &Tuning, rows: u64, cols: u64, elem_size: usize) -> ColumnStrips {
    let shape = t.shapes.columns.at(elem_size);
    let threads = shape.threads as u64;
    let tuned = t.choices.column_strip.map_or_else(|| column_strip(t, cols), u64::from);
    let needed = rows.div_ceil(shape.items as u64).max(1);
    let widest = (threads / needed).max(tuned).min(threads);
    let strip = if cols <= widest { cols } else { cols.div_ceil(cols.div_ceil(widest)) } as u32;
    let groups = (shape.threads / strip.max(1)).min(t.shapes.column_groups);
    ColumnStrips { strip, groups, tile_rows: groups as u64 * shape.items as u64 }
}

/// The tuning's strip width for a matrix of `cols` columns.
fn column_strip(t: &Tuning, cols: u64) -> u64 {
    let strips = t.choices.column_strips;
    strips.iter().find(|(most, _)| cols <= *most).map_or(t.shapes.columns_vec.threads, |s| s.1) as u64
}

/// How the vector column tiles lay out a `rows × cols` matrix of `elem_size`-byte elements whose
/// rows start on 16-byte boundaries. Strips are as
/// wide as the scalar tiles' (as many look-back chains), a power of two of vectors up to 32, no
/// wider than a row needs, and widened while half the tile's groups would still cover every row.
pub fn column_vec_plan(t: &Tuning, rows: u64, cols: u64, elem_size: usize) -> VectorStrips {
    let shape = t.shapes.columns_vec;
    let v = vector_elems(elem_size) as u64;
    let default = column_strip(t, cols) / v;
    let tuned = t.choices.column_strip.map(|w| w as u64 / v).filter(|t| t.is_power_of_two() && *t <= 32);
    let mut tpr = tuned.unwrap_or(default.clamp(1, 32));
    tpr = tpr.min(cols.div_ceil(v).next_power_of_two()).min(32);
    while tpr < 32 && shape.tile_rows(2 * tpr as u32) >= rows {
        tpr *= 2;
    }
    VectorStrips { tpr: tpr as u32, tile_rows: shape.tile_rows(tpr as u32) }
}

/// How the column tiles in shared memory split a matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BulkTiles {
    /// Threads per row: the row's 16-byte vectors.
    pub tpr: u32,
    /// Rows per group of `tpr` threads.
    pub rows: u32,
    /// Rows per tile.
    pub tile_rows: u64,
}

/// The column tiles in shared memory for matrices they take ([`column_bulk_tiles`]) whose rows
/// are no wider than the tuning's widest.
pub fn column_bulk_plan(t: &Tuning, rows: u64, cols: u64, elem_size: usize, aligned: bool) -> Option<BulkTiles> {
    column_bulk_tiles(t, rows, cols, elem_size, aligned).filter(|b| b.tpr as u64 <= t.choices.bulk_max_row_vectors)
}

/// The column tiles in shared memory, for matrices they can take: rows on 16-byte boundaries
/// (`aligned`) of a power of two of 16-byte vectors, at most 32, and more rows than one tile (the
/// kernel always claims its tile from the counter).
pub fn column_bulk_tiles(t: &Tuning, rows: u64, cols: u64, elem_size: usize, aligned: bool) -> Option<BulkTiles> {
    let v = vector_elems(elem_size) as u64;
    let tpr = cols / v;
    if !(aligned && cols.is_multiple_of(v) && tpr.is_power_of_two() && tpr <= 32) {
        return None;
    }
    let height = t.choices.bulk_rows;
    let tile_rows = Tile::new(t.shapes.columns_bulk_threads, height).tile_rows(tpr as u32);
    (rows > tile_rows).then_some(BulkTiles { tpr: tpr as u32, rows: height, tile_rows })
}

/// Tiles of its column each look-back thread of the vector column tiles reads a round (1 or 4)
/// for a matrix of `strips` strips.
pub fn column_lookback_window(t: &Tuning, strips: u64, elem_size: usize) -> u32 {
    let c = &t.choices;
    c.column_window.unwrap_or(if strips <= c.window4_max_strips.at(elem_size) { 4 } else { 1 })
}

/// Whether rows of `cols` elements of `elem_size` bytes are what a pipelined column kernel scans:
/// one or two 16-byte vectors.
pub fn pipelined_column_rows(cols: u64, elem_size: usize) -> bool {
    let bytes = cols.saturating_mul(elem_size as u64);
    bytes == VECTOR_BYTES as u64 || bytes == 2 * VECTOR_BYTES as u64
}

/// Whether the scan down the columns runs as one pipelined scan of its 16- or 32-byte rows by
/// default: from the tuning's size for that row width.
pub fn uses_columns_pipelined(t: &Tuning, rows: u64, cols: u64, elem_size: usize) -> bool {
    let row_bytes = cols.saturating_mul(elem_size as u64);
    let bytes = rows.saturating_mul(row_bytes);
    let c = &t.choices;
    (row_bytes == 2 * VECTOR_BYTES as u64 && bytes >= c.columns_pipelined_min_bytes)
        || (row_bytes == VECTOR_BYTES as u64 && bytes >= c.columns16_pipelined_min_bytes)
}

/// Whether the column-vector kernel takes the matrix: at most one batch of rows, which column
/// tiles would split into one element per thread and row and little work per block.
pub fn uses_column_vectors(t: &Tuning, rows: u64) -> bool {
    rows <= t.shapes.column_vectors.items as u64
}

/// Whether rows of `cols` elements, `rows` of them, go to the one-block-per-row kernel: each row
/// at least a tile long, and enough rows to give every SM several blocks.
pub fn uses_row_kernel(t: &Tuning, rows: u64, cols: u64, elem_size: usize) -> bool {
    cols >= t.shapes.rows.at(elem_size).tile() as u64 && rows >= t.choices.row_kernel_min_rows
}

/// Whether few long rows run as one pipelined launch by default: rows on 16-byte boundaries, each
/// of enough tiles, and a matrix large enough for the pipelined scan.
pub fn long_rows_pipelined(t: &Tuning, rows: u64, cols: u64, ty: ElemType, op: Op) -> bool {
    let size = ty.size() as u64;
    let row_tiles = cols.div_ceil(t.shapes.scan_pipeline_of(ty, op).tile() as u64);
    cols.saturating_mul(size).is_multiple_of(VECTOR_BYTES as u64)
        && row_tiles >= t.choices.long_rows_pipelined_min_tiles
        && scan::pipelined_by_default(t, ty, op, rows.saturating_mul(cols))
}

/// Rows per tile of the short-row kernel for rows of `cols` elements, or `None` when a row is
/// longer than its tile. As many whole rows as fit, rounded down so that tiles start on 16-byte
/// boundaries (vector loads) unless that would leave a tile less than half full.
pub fn short_rows_per_tile(t: &Tuning, cols: u64, elem_size: usize) -> Option<u64> {
    let tile = t.shapes.rows.at(elem_size).tile() as u64;
    if cols == 0 || cols > tile {
        return None;
    }
    let fit = tile / cols;
    let v = vector_elems(elem_size) as u64;
    let step = v / gcd(cols, v);
    let aligned = fit - fit % step;
    Some(if aligned > 0 && 2 * aligned >= fit { aligned } else { fit })
}

#[cfg(test)]
mod tests {
    use super::*;
    use scan_abi::tuning::for_arch;

    const SM90: &Tuning = for_arch(90);

    fn cs(strip: u32, groups: u32, tile_rows: u64) -> ColumnStrips {
        ColumnStrips { strip, groups, tile_rows }
    }

    fn vs(tpr: u32, tile_rows: u64) -> VectorStrips {
        VectorStrips { tpr, tile_rows }
    }

    /// The column tiles in shared memory at the tuning's height.
    fn bulk_shape() -> Tile {
        Tile::new(SM90.shapes.columns_bulk_threads, SM90.choices.bulk_rows)
    }

    #[test]
    fn column_tiles_in_shared_memory_take_rows_of_up_to_32_vectors_and_more_than_one_tile() {
        let (four, eight) = (bulk_shape(), bulk_shape());
        let tile = |tpr: u32, shape: Tile| Some(BulkTiles { tpr, rows: shape.items, tile_rows: shape.tile_rows(tpr) });
        assert_eq!(column_bulk_tiles(SM90, 1 << 24, 16, 4, true), tile(4, four));
        assert_eq!(column_bulk_tiles(SM90, 1 << 24, 128, 4, true), tile(32, four));
        assert_eq!(column_bulk_tiles(SM90, 1 << 24, 2, 8, true), tile(1, eight));
        assert_eq!(column_bulk_tiles(SM90, 1 << 24, 64, 8, true), tile(32, eight));
        let (rows4, rows8) = (four.tile_rows(4), eight.tile_rows(8));
        assert_eq!(
            column_bulk_tiles(SM90, rows4 + 1, 16, 4, true).map(|t| t.tile_rows),
            Some(256 / 4 * u64::from(four.items))
        );
        assert_eq!(column_bulk_tiles(SM90, rows4, 16, 4, true), None, "one tile");
        assert_eq!(column_bulk_tiles(SM90, rows8, 16, 8, true), None, "one tile");
        assert_eq!(column_bulk_tiles(SM90, 1 << 24, 16, 4, false), None, "off 16-byte boundaries");
        assert_eq!(column_bulk_tiles(SM90, 1 << 24, 256, 4, true), None, "wider than 32 vectors");
        assert_eq!(column_bulk_tiles(SM90, 1 << 24, 48, 4, true), None, "12 vectors");
        assert_eq!(column_bulk_tiles(SM90, 1 << 24, 18, 4, true), None, "not whole vectors");
        {
            assert_eq!(column_bulk_plan(SM90, 1 << 24, 4, 4, true), tile(1, four));
            assert_eq!(column_bulk_plan(SM90, 1 << 24, 64, 4, true), tile(16, four));
            assert_eq!(column_bulk_plan(SM90, 1 << 24, 32, 8, true), tile(16, eight));
            assert_eq!(column_bulk_plan(SM90, 1 << 24, 128, 4, true), tile(32, four));
            assert_eq!(column_bulk_plan(SM90, 1 << 24, 64, 8, true), tile(32, eight));
            assert_eq!(column_bulk_plan(SM90, 1 << 24, 256, 4, true), None, "wider than 32 vectors");
            assert_eq!(column_bulk_plan(SM90, 1 << 24, 16, 4, false), None, "off 16-byte boundaries");
        }
    }

    #[test]
    fn column_tiles_in_shared_memory_leave_two_blocks_to_an_h200_sm_and_no_taller_would() {
        // An H200 SM has 228 KiB of shared memory, 1 KiB of it reserved for each block.
        let fits_two = |smem: u32| 2 * (smem + 1024) <= 228 * 1024;
        for size in [4, 8] {
            let items = SM90.choices.bulk_rows;
            assert!(fits_two(smem::columns_bulk(&SM90.shapes, size, items)), "{size}-byte elements");
            assert!(!fits_two(smem::columns_bulk(&SM90.shapes, size, items + 1)), "{size}-byte elements");
        }
    }

    #[test]
    fn strips_cover_the_columns_evenly() {
        let tall = 1 << 20;
        let (it4, it8) = (rows_per_group(4), rows_per_group(8));
        assert_eq!(column_plan(SM90, tall, 8, 4), cs(8, 32, 32 * it4));
        assert_eq!(column_plan(SM90, tall, 64, 4), cs(16, 16, 16 * it4));
        assert_eq!(column_plan(SM90, tall, 65, 4), cs(13, 19, 19 * it4));
        assert_eq!(column_plan(SM90, tall, 4096, 4), cs(32, 8, 8 * it4));
        assert_eq!(column_plan(SM90, tall, 16384, 8), cs(64, 4, 4 * it8));
        assert_eq!(column_plan(SM90, tall, 2, 4), cs(2, 32, 32 * it4));
        for cols in 2..2000u64 {
            let ColumnStrips { strip, groups, .. } = column_plan(SM90, tall, cols, 4);
            assert!(strip <= column_strip(SM90, cols) as u32 && groups >= 1, "{cols}");
            let strips = cols.div_ceil(strip as u64);
            assert!(strips * strip as u64 - cols < strips, "{cols}: strips {strips} of {strip}");
        }
    }

    /// Rows each thread group of the scalar column tiles covers for `elem_size`-byte elements.
    fn rows_per_group(elem_size: usize) -> u64 {
        SM90.shapes.columns.at(elem_size).items as u64
    }

    #[test]
    fn few_rows_widen_the_strips_so_no_group_idles() {
        let it = rows_per_group(4);
        assert_eq!(column_plan(SM90, 8, 1 << 25, 4), cs(256, 1, it));
        assert_eq!(column_plan(SM90, it + 8, 1 << 20, 4), cs(128, 2, 2 * it));
        assert_eq!(column_plan(SM90, 4 * it - 1, 1 << 20, 4), cs(64, 4, 4 * it));
        assert_eq!(column_plan(SM90, 1000, 1 << 20, 4), cs(64, 4, 4 * it));
        assert_eq!(column_plan(SM90, 1 << 20, 1 << 20, 4), cs(64, 4, 4 * it));
        assert_eq!(column_plan(SM90, 8, 100, 4), cs(100, 2, 2 * it));
        for rows in 1..300u64 {
            let ColumnStrips { strip, groups, tile_rows } = column_plan(SM90, rows, 1 << 20, 4);
            assert!(groups as u64 * SM90.shapes.columns.at(4).items as u64 == tile_rows, "{rows}");
            assert!(strip * groups <= 256 && (tile_rows >= rows || strip <= 64), "{rows}: {strip} x {groups}");
        }
    }

    #[test]
    fn the_vector_column_plan_keeps_strips_of_whole_warps_and_widens_them_for_few_rows() {
        let tall = 1 << 20;
        let it = SM90.shapes.columns_vec.items as u64;
        assert_eq!(column_vec_plan(SM90, tall, 256, 4), vs(4, 64 * it));
        assert_eq!(column_vec_plan(SM90, tall, 256, 8), vs(8, 32 * it));
        assert_eq!(column_vec_plan(SM90, tall, 4096, 4), vs(8, 32 * it));
        assert_eq!(column_vec_plan(SM90, tall, 16384, 8), vs(32, 8 * it));
        assert_eq!(column_vec_plan(SM90, tall, 4, 4), vs(1, 256 * it));
        assert_eq!(column_vec_plan(SM90, tall, 12, 4), vs(4, 64 * it), "three vectors: a strip of four, one idle");
        assert_eq!(column_vec_plan(SM90, 20, 1024, 4), vs(32, 8 * it));
        assert_eq!(column_vec_plan(SM90, 8 * it + 1, 1024, 4), vs(16, 16 * it));
        for rows in 1..3000u64 {
            for cols in [4u64, 8, 12, 64, 256, 1024, 1 << 20] {
                let VectorStrips { tpr, tile_rows } = column_vec_plan(SM90, rows, cols, 4);
                assert!(tpr.is_power_of_two() && tpr <= 32, "{rows} x {cols}");
                assert_eq!(tile_rows, 256 / tpr as u64 * it);
                assert!(tpr == 32 || tile_rows / 2 < rows || tpr as u64 * 4 >= cols, "{rows} x {cols}: {tpr}");
            }
        }
    }

    #[test]
    fn long_rows_and_many_go_to_the_row_kernel() {
        assert!(uses_row_kernel(SM90, 16384, 16384, 4) && uses_row_kernel(SM90, 256, 1 << 20, 4));
        assert!(!uses_row_kernel(SM90, 1 << 20, 8, 4));
        assert!(!uses_row_kernel(SM90, 8, 1 << 20, 4));
    }

    #[test]
    fn vector_column_tiles_of_few_strips_look_back_four_tiles_a_round() {
        assert_eq!(
            (
                column_lookback_window(SM90, 1, 4),
                column_lookback_window(SM90, 4, 4),
                column_lookback_window(SM90, 16, 4)
            ),
            (4, 4, 1)
        );
        assert_eq!((column_lookback_window(SM90, 1, 8), column_lookback_window(SM90, 4, 8)), (4, 1));
    }

    #[test]
    fn large_matrices_of_16_and_32_byte_rows_and_few_very_long_rows_go_to_the_pipelined_kernel() {
        let (rows, cols) = ((64u64 << 20) / 32, 8);
        assert!(uses_columns_pipelined(SM90, rows, cols, 4) && uses_columns_pipelined(SM90, rows, 4, 8));
        assert!(!uses_columns_pipelined(SM90, rows - 1, cols, 4), "below 64 MiB the column tiles are faster");
        assert!(
            !uses_columns_pipelined(SM90, rows, 7, 4)
                && !uses_columns_pipelined(SM90, rows, 16, 4)
                && !uses_columns_pipelined(SM90, rows, 8, 8)
        );
        let rows16 = SM90.choices.columns16_pipelined_min_bytes / 16;
        assert!(
            uses_columns_pipelined(SM90, rows16, 4, 4) && uses_columns_pipelined(SM90, rows16, 2, 8),
            "16-byte rows"
        );
        assert!(
            !uses_columns_pipelined(SM90, rows16 - 1, 4, 4),
            "below 4 MiB, 16-byte rows stay with the column tiles"
        );
        assert!(pipelined_column_rows(4, 4) && pipelined_column_rows(2, 8));
        // Rows of 16 tiles, as many as reach the pipelined scan's size, and one fewer.
        let long = 16 * SM90.shapes.scan_pipeline.at(4).tile() as u64;
        let rows = (SM90.choices.pipelined_min_bytes.at(4) / 4).div_ceil(long);
        assert!(rows > 1);
        assert!(long_rows_pipelined(SM90, rows, long, ElemType::F32, Op::Add));
        assert!(!long_rows_pipelined(SM90, rows - 1, long, ElemType::F32, Op::Add), "under the pipelined scan's size");
        assert!(
            !long_rows_pipelined(SM90, rows, long + 1, ElemType::F32, Op::Add),
            "rows that break 16-byte alignment"
        );
        let short = 15 * SM90.shapes.scan_pipeline.at(4).tile() as u64;
        assert!(!long_rows_pipelined(SM90, 1 << 20, short, ElemType::F32, Op::Add), "rows of under 16 tiles");
    }

    #[test]
    fn short_row_tiles_hold_whole_rows_and_start_aligned_when_that_costs_little() {
        let tile = SM90.shapes.rows.at(4).tile() as u64;
        assert_eq!(short_rows_per_tile(SM90, 8, 4), Some(tile / 8));
        assert_eq!(short_rows_per_tile(SM90, tile, 4), Some(1));
        assert_eq!(short_rows_per_tile(SM90, tile + 1, 4), None);
        assert_eq!(short_rows_per_tile(SM90, 0, 4), None);
        assert_eq!(short_rows_per_tile(SM90, tile - 1, 4), Some(1), "one unaligned row beats none");
        for size in [4, 8] {
            let tile = SM90.shapes.rows.at(size).tile() as u64;
            let v = vector_elems(size) as u64;
            for cols in 1..=tile {
                let r = short_rows_per_tile(SM90, cols, size).unwrap();
                let fit = tile / cols;
                assert!(r >= 1 && r * cols <= tile && 2 * r >= fit, "{cols}");
                assert!((r * cols).is_multiple_of(v) || r == fit, "{cols}: {r} rows per tile");
            }
        }
    }

    fn request(rows: u64, cols: u64, axis: Axis, kernel: BatchedKernel) -> BatchedRequest {
        let matrix = Matrix { rows, cols };
        BatchedRequest { ty: ElemType::F32, op: Op::Add, exclusive: false, matrix, axis, kernel, aligned: true }
    }

    /// The kernel family a plan launches (`None` for a plain scan).
    fn family(plan: &BatchedPlan) -> Option<Family> {
        Some(match plan {
            BatchedPlan::Scan(_) => return None,
            BatchedPlan::ColumnTiles { launch, .. }
            | BatchedPlan::ColumnVectors { launch, .. }
            | BatchedPlan::ShortRows { launch, .. }
            | BatchedPlan::RowBlocks { launch, .. }
            | BatchedPlan::RowChains { launch, .. } => launch.kernel.family,
            BatchedPlan::ColumnsPipelined(p) | BatchedPlan::RowsPipelined(p) => p.launch.kernel.family,
        })
    }

    #[test]
    fn each_shape_takes_its_path_by_default() {
        let auto = |rows, cols, axis| family(&plan(SM90, &request(rows, cols, axis, BatchedKernel::Auto)).unwrap());
        use Axis::*;
        assert_eq!(auto(1, 1000, Rows), None, "one row is a plain scan");
        assert_eq!(auto(1000, 1, Columns), None, "one column is a plain scan");
        assert_eq!(auto(8, 1 << 20, Columns), Some(Family::BatchedColumnVectors));
        assert_eq!(auto(1 << 22, 8, Columns), Some(Family::BatchedColumnsPipelined));
        assert_eq!(auto(1 << 22, 4, Columns), Some(Family::BatchedColumnsPipelined16));
        assert_eq!(auto(1 << 16, 8, Columns), Some(Family::BatchedColumnsBulk), "under 64 MiB");
        assert_eq!(auto(1 << 21, 128, Columns), Some(Family::BatchedColumnsBulk));
        assert_eq!(auto(1 << 20, 256, Columns), Some(Family::BatchedColumnsVec));
        assert_eq!(auto(4096, 65, Columns), Some(Family::BatchedColumns), "rows off 16-byte boundaries");
        assert_eq!(auto(1 << 20, 8, Rows), Some(Family::BatchedShortRows));
        assert_eq!(auto(16384, 16384, Rows), Some(Family::BatchedRows));
        assert_eq!(auto(8, 1 << 25, Rows), Some(Family::BatchedRowsPipelined));
        assert_eq!(auto(8, (1 << 25) + 1, Rows), Some(Family::BatchedLongRows), "rows off 16-byte boundaries");
        let unaligned = BatchedRequest { aligned: false, ..request(1 << 20, 256, Columns, BatchedKernel::Auto) };
        assert_eq!(family(&plan(SM90, &unaligned).unwrap()), Some(Family::BatchedColumns));
    }

    #[test]
    fn every_kernel_can_be_chosen_where_it_applies_and_is_refused_elsewhere() {
        use Axis::*;
        use BatchedKernel::*;
        let chosen = |rows, cols, axis, k| plan(SM90, &request(rows, cols, axis, k)).map(|p| family(&p));
        let cases = [
            (ColumnTiles, 1 << 20, 256, Columns, Family::BatchedColumns),
            (VectorTiles, 1 << 16, 4, Columns, Family::BatchedColumnsVecW4),
            (VectorTiles, 1 << 16, 4096, Columns, Family::BatchedColumnsVec),
            (BulkTiles, 1 << 20, 256 / 2, Columns, Family::BatchedColumnsBulk),
            (ColumnVectors, 5, 1000, Columns, Family::BatchedColumnVectors),
            (Pipelined, 100, 8, Columns, Family::BatchedColumnsPipelined),
            (ShortRows, 100, 1000, Rows, Family::BatchedShortRows),
            (RowBlocks, 3, 100, Rows, Family::BatchedRows),
            (RowChains, 1000, 100, Rows, Family::BatchedLongRows),
            (Pipelined, 3, 4096, Rows, Family::BatchedRowsPipelined),
        ];
        for (k, rows, cols, axis, want) in cases {
            assert_eq!(chosen(rows, cols, axis, k).unwrap(), Some(want), "{} {rows} x {cols}", k.name());
        }
        let refused = [
            (ColumnTiles, 10, 10, Rows, "scans columns"),
            (ShortRows, 10, 10, Columns, "scans rows"),
            (VectorTiles, 100, 7, Columns, "16-byte boundaries"),
            (BulkTiles, 100, 8, Columns, "fit one tile"),
            (BulkTiles, 1 << 20, 12, Columns, "power of two"),
            (ColumnVectors, 100, 8, Columns, "more rows than one batch"),
            (Pipelined, 100, 12, Columns, "16 or 32 bytes"),
            (ShortRows, 10, 1 << 20, Rows, "longer than a tile"),
            (Pipelined, 10, 1001, Rows, "16-byte boundaries"),
        ];
        for (k, rows, cols, axis, why) in refused {
            let e = chosen(rows, cols, axis, k).unwrap_err().to_string();
            assert!(e.contains(why), "{} {rows} x {cols}: {e}", k.name());
        }
        let e = plan(SM90, &BatchedRequest { op: Op::Xor, ty: ElemType::U32, ..request(4, 4, Rows, Auto) });
        assert!(e.unwrap_err().to_string().contains("not xor on u32"));
    }
}
