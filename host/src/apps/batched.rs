//! Batched scans of a row-major `rows × cols` matrix along either axis, each one pass over the
//! data (see `gpu/src/kernels/batched.rs`): down every column with a look-back per column (or, for
//! few rows, one thread per vector of columns walking every row; for rows of 32 bytes, one
//! pipelined scan of the rows), along
//! many long rows with one block walking each, few with one single-pass chain of tiles per row,
//! short rows as tiles of whole rows that need nothing from one another. A single row or column
//! is a plain scan.

use crate::apps::segmented::supported;
use crate::dispatch::single_pass::{self, knob, switch, Persistent};
use crate::dispatch::{check_output, grid, Job, ScanOptions, TempStorage};
use crate::element::{ElemType, Element, Op};
use crate::error::{Error, Result};
use crate::runtime::Gpu;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut, PushKernelArg};
use scan_abi::{layout, names, status, tuning};
use std::sync::Arc;

/// How the column kernel lays out a `rows × cols` matrix of `elem_size`-byte elements: (strip
/// width, thread groups per tile, rows per tile). Strips split the columns as evenly as the widest
/// strip allows: `tuning::column_strip`, or `GPU_SCAN_COLUMN_STRIP` (8 to 256) to compare widths
/// in one run, widened when fewer groups than it leaves already cover every row, so that no
/// group idles.
pub fn column_plan(rows: u64, cols: u64, elem_size: usize) -> (u32, u32, u64) {
    let shape = tuning::columns(tuning::DEFAULT_ARCH, elem_size);
    let threads = shape.threads as u64;
    let tuned = std::env::var("GPU_SCAN_COLUMN_STRIP").ok().and_then(|v| v.parse::<u64>().ok());
    let tuned =
        tuned.filter(|w| (8..=threads).contains(w)).unwrap_or(tuning::column_strip(tuning::DEFAULT_ARCH, cols) as u64);
    let needed = rows.div_ceil(shape.items as u64).max(1);
    let widest = (threads / needed).clamp(tuned, threads);
    let strip = if cols <= widest { cols } else { cols.div_ceil(cols.div_ceil(widest)) } as u32;
    let groups = (shape.threads / strip.max(1)).min(tuning::COLUMN_GROUPS);
    (strip, groups, groups as u64 * shape.items as u64)
}

/// How the vector column kernel lays out a `rows × cols` matrix of `elem_size`-byte elements whose
/// rows start on 16-byte boundaries: (threads per row of a strip, rows per tile). The strip is as
/// wide as `tuning::column_vec_threads` says, or `GPU_SCAN_COLUMN_STRIP` columns (a power of two
/// from one vector to 32) to compare widths in one run, no wider than the row's vectors need,
/// and widened while half the tile's groups would still cover every row.
pub fn column_vec_plan(rows: u64, cols: u64, elem_size: usize) -> (u32, u64) {
    let shape = tuning::columns_vec(tuning::DEFAULT_ARCH, elem_size);
    let v = (tuning::VECTOR_BYTES / elem_size) as u64;
    let tuned = std::env::var("GPU_SCAN_COLUMN_STRIP").ok().and_then(|w| w.parse::<u64>().ok());
    let tuned = tuned.map(|w| w / v).filter(|t| t.is_power_of_two() && *t <= 32);
    let mut tpr = tuned.unwrap_or(tuning::column_vec_threads(tuning::DEFAULT_ARCH, cols, elem_size) as u64);
    tpr = tpr.min(cols.div_ceil(v).next_power_of_two()).min(32);
    while tpr < 32 && shape.tile_rows(2 * tpr as u32) >= rows {
        tpr *= 2;
    }
    (tpr as u32, shape.tile_rows(tpr as u32))
}

/// How the column tiles in shared memory (`batched_columns_bulk`) split a matrix.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BulkTiles {
    /// Threads per row: the row's 16-byte vectors.
    pub tpr: u32,
    /// Rows per group of `tpr` threads.
    pub items: u32,
    /// Rows per tile.
    pub tile_rows: u64,
}

/// The column tiles in shared memory for matrices they take ([`column_bulk_tiles`]) whose rows
/// are as narrow as `tuning::columns_bulk_rows` says, or any they take as
/// `GPU_SCAN_COLUMN_BULK=0|1` says (to measure them against the vector tiles in one run).
pub fn column_bulk_plan(rows: u64, cols: u64, elem_size: usize, aligned: bool) -> Option<BulkTiles> {
    let tiles = column_bulk_tiles(rows, cols, elem_size, aligned)?;
    let chosen = switch("GPU_SCAN_COLUMN_BULK")
        .unwrap_or_else(|| tuning::columns_bulk_rows(tuning::DEFAULT_ARCH, tiles.tpr as u64));
    chosen.then_some(tiles)
}

/// Most rows a thread group of the column tiles in shared memory may take: 256 threads of 48
/// 16-byte vectors are 192 KiB, under the 227 KiB a block of the H200 may have.
const MAX_BULK_ITEMS: u32 = 48;

/// Rows per thread group of the column tiles in shared memory: `tuning::columns_bulk`'s, or
/// `GPU_SCAN_COLUMN_BULK_ITEMS` (1 to [`MAX_BULK_ITEMS`]) to measure tile heights in one run.
pub fn column_bulk_items(elem_size: usize) -> u32 {
    knob("GPU_SCAN_COLUMN_BULK_ITEMS")
        .filter(|k| (1..=MAX_BULK_ITEMS).contains(k))
        .unwrap_or(tuning::columns_bulk(tuning::DEFAULT_ARCH, elem_size).items)
}

/// How many tiles after its own a block of the column tiles in shared memory has brought into L2:
/// `tuning::columns_bulk_ahead`, or `GPU_SCAN_COLUMN_BULK_AHEAD` (0 for none) to measure
/// distances in one run.
pub fn column_bulk_ahead() -> u32 {
    knob("GPU_SCAN_COLUMN_BULK_AHEAD").unwrap_or(tuning::columns_bulk_ahead(tuning::DEFAULT_ARCH))
}

/// The column tiles in shared memory, for matrices they can take: rows on 16-byte boundaries
/// (`aligned`) of a power of two of 16-byte vectors, at most 32, and more rows than one tile (the
/// kernel always claims its tile from the counter).
pub fn column_bulk_tiles(rows: u64, cols: u64, elem_size: usize, aligned: bool) -> Option<BulkTiles> {
    let v = (tuning::VECTOR_BYTES / elem_size) as u64;
    let tpr = cols / v;
    if !(aligned && cols.is_multiple_of(v) && tpr.is_power_of_two() && tpr <= 32) {
        return None;
    }
    let items = column_bulk_items(elem_size);
    let tile_rows = tuning::columns_bulk_at(tuning::DEFAULT_ARCH, elem_size, items).tile_rows(tpr as u32);
    (rows > tile_rows).then_some(BulkTiles { tpr: tpr as u32, items, tile_rows })
}

/// Whether the scan down the columns of a `rows × cols` matrix goes to the vector column tiles:
/// rows on 16-byte boundaries in `input` and `output` (`aligned`), for the element sizes
/// `tuning::columns_vec_by_default` names, or as `GPU_SCAN_COLUMN_VEC=0|1` says for any size (to
/// measure both tiles in one run).
pub fn uses_columns_vec(cols: u64, elem_size: usize, aligned: bool) -> bool {
    aligned
        && (cols * elem_size as u64).is_multiple_of(tuning::VECTOR_BYTES as u64)
        && switch("GPU_SCAN_COLUMN_VEC").unwrap_or(tuning::columns_vec_by_default(tuning::DEFAULT_ARCH, elem_size))
}

/// Tiles of its column each look-back thread of the vector column tiles reads a round (1 or 4)
/// for a matrix of `strips` strips:
/// `tuning::column_lookback_window`, or `GPU_SCAN_COLUMN_WINDOW` (1 or 4) to measure both in one
/// run.
pub fn column_lookback_window(strips: u64, elem_size: usize) -> u32 {
    let tuned = std::env::var("GPU_SCAN_COLUMN_WINDOW").ok().and_then(|w| w.parse::<u32>().ok());
    tuned.filter(|w| [1, 4].contains(w)).unwrap_or(tuning::column_lookback_window(
        tuning::DEFAULT_ARCH,
        strips,
        elem_size,
    ))
}

/// Whether the scan down the columns of a `rows × cols` matrix runs as one pipelined scan of its
/// 16- or 32-byte rows (`tuning::columns_pipelined`); `GPU_SCAN_PIPELINED=0|1` decides for any
/// matrix of such rows instead, to measure both kernels in one run.
pub fn uses_columns_pipelined(rows: u64, cols: u64, elem_size: usize) -> bool {
    switch("GPU_SCAN_PIPELINED").map_or(tuning::columns_pipelined(tuning::DEFAULT_ARCH, rows, cols, elem_size), |p| {
        p && tuning::pipelined_column_rows(cols, elem_size)
    })
}

/// Whether the scan down the columns of a `rows × cols` matrix goes to the column-vector kernel
/// (one thread walks each vector of adjacent columns down every row): at most one batch of rows
/// (`tuning::column_vectors`), which column tiles would split into one element per thread and
/// row and little work per block (see `tuning::column_vector_bytes` for what each measured).
pub fn uses_column_vectors(rows: u64, elem_size: usize) -> bool {
    rows <= tuning::column_vectors(tuning::DEFAULT_ARCH, elem_size).items as u64
}

/// Whether rows of `cols` elements, `rows` of them, go to the row kernel: each row at least a
/// tile long, and enough rows to give every SM several blocks (fewer go to one single-pass chain
/// of tiles per row). `GPU_SCAN_ROW_KERNEL_MIN_ROWS` replaces `tuning::ROW_KERNEL_MIN_ROWS`, to
/// compare both kernels on one shape in one run.
pub fn uses_row_kernel(rows: u64, cols: u64, elem_size: usize) -> bool {
    let min_rows = std::env::var("GPU_SCAN_ROW_KERNEL_MIN_ROWS").ok().and_then(|v| v.parse::<u64>().ok());
    cols >= tuning::rows(tuning::DEFAULT_ARCH, elem_size).tile() as u64
        && rows >= min_rows.unwrap_or(tuning::ROW_KERNEL_MIN_ROWS).max(2)
}

/// Whether few long rows (`rows` of `cols`) run as one launch of the pipelined kernel, each row a
/// chain of its own tiles, rather than one launch of one-tile-per-block chains: when each row
/// starts on a 16-byte boundary and the matrix is large enough (`tuning::long_rows_pipelined`).
/// `GPU_SCAN_PIPELINED=0|1` decides instead for rows on 16-byte boundaries, to measure both in
/// one run.
pub fn long_rows_pipelined(rows: u64, cols: u64, ty: ElemType, op: Op) -> bool {
    let aligned = (cols * ty.size() as u64).is_multiple_of(tuning::VECTOR_BYTES as u64);
    switch("GPU_SCAN_PIPELINED").unwrap_or(tuning::long_rows_pipelined(tuning::DEFAULT_ARCH, ty, op, rows, cols))
        && aligned
}

/// Rows per tile of the short-row kernel for rows of `cols` elements, or `None` when a row is
/// longer than its tile. As many whole rows as fit, rounded down so that tiles start on 16-byte
/// boundaries (vector loads) unless that would leave a tile less than half full.
pub fn short_rows_per_tile(cols: u64, elem_size: usize) -> Option<u64> {
    let tile = tuning::short_rows(tuning::DEFAULT_ARCH, elem_size).tile() as u64;
    if cols == 0 || cols > tile {
        return None;
    }
    let fit = tile / cols;
    let v = tuning::vector_elems(elem_size) as u64;
    let step = v / gcd(cols, v);
    let aligned = fit - fit % step;
    Some(if aligned > 0 && 2 * aligned >= fit { aligned } else { fit })
}

fn gcd(a: u64, b: u64) -> u64 {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

/// One launch plan of the column tiles, scalar, vector or in shared memory: the kernel group,
/// columns per strip, the kernel's strip argument (columns, or threads per row for vectors), the
/// two arguments only the tiles in shared memory take (rows per thread group, tiles brought into
/// L2 ahead), rows per tile, dynamic shared memory and threads per block.
struct ColumnTiles {
    name: &'static str,
    strip: u64,
    arg: u32,
    bulk: Option<(u32, u32)>,
    tile_rows: u64,
    smem: u32,
    threads: u32,
}

/// `rows × cols`, after checking that `n` elements are whole rows and the output is long enough.
fn shape(n: u64, output: usize, rows: Option<u64>, cols: Option<u64>) -> Result<(u64, u64)> {
    let (rows, cols) = match (rows, cols) {
        (Some(r), _) if r == 0 || !n.is_multiple_of(r) => {
            return Err(Error::invalid(format!("{n} elements are not {r} whole rows")))
        }
        (Some(r), _) => (r, n / r),
        (_, Some(c)) if c == 0 || !n.is_multiple_of(c) => {
            return Err(Error::invalid(format!("{n} elements are not whole rows of {c}")))
        }
        (_, Some(c)) => (n / c, c),
        (None, None) => unreachable!("callers give rows or columns"),
    };
    check_output(output, n, "elements")?;
    Ok((rows, cols))
}

impl Gpu {
    /// The scan down every column of the row-major matrix `input` of `rows` rows (the batched
    /// scan along the outer axis) into `output`, with `op` (add, mul, min, max; 32- and 64-bit
    /// types).
    #[allow(clippy::too_many_arguments)]
    pub fn scan_columns<T: Element>(
        &self,
        stream: &Arc<CudaStream>,
        input: &CudaSlice<T>,
        rows: u64,
        output: &mut CudaSlice<T>,
        op: Op,
        exclusive: bool,
        temp: &mut TempStorage,
    ) -> Result<()> {
        supported::<T>(op)?;
        let n = input.len() as u64;
        let (rows, cols) = shape(n, output.len(), Some(rows), None)?;
        if n == 0 {
            return Ok(());
        }
        if cols == 1 {
            return self.scan(stream, input, output, &ScanOptions::new(op).exclusive(exclusive), temp);
        }
        let size = T::TYPE.size();
        let flags = if exclusive { scan_abi::flags::EXCLUSIVE } else { 0 };
        if uses_columns_pipelined(rows, cols, size) {
            let row_bytes = (cols as usize) * size;
            let (kernels, p) = if row_bytes == tuning::VECTOR_BYTES {
                (names::BATCHED_COLUMNS_PIPELINED16, tuning::pipeline_columns16(tuning::DEFAULT_ARCH, size))
            } else {
                (names::BATCHED_COLUMNS_PIPELINED, tuning::pipeline_columns(tuning::DEFAULT_ARCH, size))
            };
            let name = format!("{kernels}_{}_{}", T::TYPE.name(), op.name());
            let plan = Persistent::plan(self, stream, &name, p, n, n, size, row_bytes, temp)?;
            let backoff_ns = tuning::lookback_backoff_ns(tuning::DEFAULT_ARCH, row_bytes);
            let (i, _r) = input.device_ptr(stream);
            let (o, _w) = output.device_ptr_mut(stream);
            let mut b = stream.launch_builder(&plan.f);
            b.arg(&i).arg(&o).arg(&n).arg(&flags).arg(&plan.base).arg(&plan.counter_base).arg(&plan.epoch);
            b.arg(&backoff_ns).arg(&plan.stages);
            // SAFETY: matches columns_pipelined_kernels! in gpu/ (the kernel for this row width);
            // input and output hold rows × cols elements, the tile state one row's status per tile.
            return temp.poison_on_error(unsafe { b.launch(plan.cfg) }.map(drop).map_err(|e| Error::kernel(&name, e)));
        }
        if uses_column_vectors(rows, size) {
            let name = format!("{}_{}_{}", names::BATCHED_COLUMN_VECTORS, T::TYPE.name(), op.name());
            let f = self.kernel(&name)?;
            let threads = tuning::column_vectors(tuning::DEFAULT_ARCH, size).threads;
            let vectors = cols.div_ceil((tuning::column_vector_bytes(tuning::DEFAULT_ARCH, size) / size) as u64);
            let cfg = grid(vectors.div_ceil(threads as u64).min(tuning::ROW_KERNEL_MAX_BLOCKS), threads, 0)?;
            let (i, _r) = input.device_ptr(stream);
            let (o, _w) = output.device_ptr_mut(stream);
            let mut b = stream.launch_builder(&f);
            b.arg(&i).arg(&o).arg(&rows).arg(&cols).arg(&flags);
            // SAFETY: matches batched_kernels! in gpu/; input and output hold rows × cols elements.
            return unsafe { b.launch(cfg) }.map(drop).map_err(|e| Error::kernel(&name, e));
        }
        let (i, _r) = input.device_ptr(stream);
        let (o, _w) = output.device_ptr_mut(stream);
        let aligned = (i | o).is_multiple_of(tuning::VECTOR_BYTES as u64);
        let tiles = if let Some(bulk) = column_bulk_plan(rows, cols, size, aligned) {
            ColumnTiles {
                name: names::BATCHED_COLUMNS_BULK,
                strip: cols,
                arg: bulk.tpr,
                bulk: Some((bulk.items, column_bulk_ahead())),
                tile_rows: bulk.tile_rows,
                smem: layout::columns_bulk_smem(tuning::DEFAULT_ARCH, size, bulk.items),
                threads: tuning::columns_bulk(tuning::DEFAULT_ARCH, size).threads,
            }
        } else if uses_columns_vec(cols, size, aligned) {
            let (tpr, tile_rows) = column_vec_plan(rows, cols, size);
            let strip = tpr as u64 * (tuning::VECTOR_BYTES / size) as u64;
            let window = column_lookback_window(cols.div_ceil(strip), size);
            ColumnTiles {
                name: if window == 4 { names::BATCHED_COLUMNS_VEC_WINDOW4 } else { names::BATCHED_COLUMNS_VEC },
                strip,
                arg: tpr,
                bulk: None,
                tile_rows,
                smem: layout::columns_vec_smem(tuning::DEFAULT_ARCH, size),
                threads: tuning::columns_vec(tuning::DEFAULT_ARCH, size).threads,
            }
        } else {
            let (strip, _, tile_rows) = column_plan(rows, cols, size);
            ColumnTiles {
                name: names::BATCHED_COLUMNS,
                strip: strip as u64,
                arg: strip,
                bulk: None,
                tile_rows,
                smem: layout::columns_smem(tuning::DEFAULT_ARCH, size),
                threads: tuning::columns(tuning::DEFAULT_ARCH, size).threads,
            }
        };
        let chunks = rows.div_ceil(tiles.tile_rows);
        let count = chunks * cols.div_ceil(tiles.strip);
        let slots = chunks * cols;
        let too_many = || Error::invalid(format!("a {rows} x {cols} matrix is too many column tiles"));
        let advance = u32::try_from(count).map_err(|_| too_many())?;
        u32::try_from(slots).map_err(|_| too_many())?;
        // Tiles that hold every row claim no tile index (see the kernels).
        let advance = if chunks == 1 { 0 } else { advance };
        let (base, epoch, counter_base) = temp.single_pass(self, stream, status::temp_bytes(slots, size), advance)?;
        let name = format!("{}_{}_{}", tiles.name, T::TYPE.name(), op.name());
        let f = self.kernel(&name)?;
        single_pass::allow_shared_memory(&f, tiles.smem).map_err(|e| Error::kernel(&name, e))?;
        let cfg = grid(count, tiles.threads, tiles.smem)?;
        let mut b = stream.launch_builder(&f);
        b.arg(&i).arg(&o).arg(&rows).arg(&cols).arg(&tiles.arg);
        if let Some((items, ahead)) = &tiles.bulk {
            b.arg(items).arg(ahead);
        }
        b.arg(&flags).arg(&base).arg(&counter_base).arg(&epoch);
        // SAFETY: matches batched_kernels! in gpu/; input and output hold rows × cols elements
        // (rows on 16-byte boundaries for the vector tiles), the tile state one status word per
        // (row block, column).
        temp.poison_on_error(unsafe { b.launch(cfg) }.map(drop).map_err(|e| Error::kernel(&name, e)))
    }

    /// The scan of every row of the row-major matrix `input` of rows of `cols` elements (the
    /// batched scan along the last axis) into `output`.
    #[allow(clippy::too_many_arguments)]
    pub fn scan_rows<T: Element>(
        &self,
        stream: &Arc<CudaStream>,
        input: &CudaSlice<T>,
        cols: u64,
        output: &mut CudaSlice<T>,
        op: Op,
        exclusive: bool,
        temp: &mut TempStorage,
    ) -> Result<()> {
        supported::<T>(op)?;
        let n = input.len() as u64;
        let (rows, cols) = shape(n, output.len(), None, Some(cols))?;
        let size = T::TYPE.size();
        if n == 0 {
            return Ok(());
        }
        if rows == 1 {
            return self.scan(stream, input, output, &ScanOptions::new(op).exclusive(exclusive), temp);
        }
        let (name, cfg, per_tile) = if let Some(per_tile) = short_rows_per_tile(cols, size) {
            let threads = tuning::short_rows(tuning::DEFAULT_ARCH, size).threads;
            let tiles = rows.div_ceil(per_tile).min(tuning::ROW_KERNEL_MAX_BLOCKS);
            (
                names::BATCHED_SHORT_ROWS,
                grid(tiles, threads, layout::short_rows_smem(tuning::DEFAULT_ARCH, size))?,
                Some(per_tile),
            )
        } else if uses_row_kernel(rows, cols, size) {
            let threads = tuning::rows(tuning::DEFAULT_ARCH, size).threads;
            let blocks = rows.min(tuning::ROW_KERNEL_MAX_BLOCKS);
            (names::BATCHED_ROWS, grid(blocks, threads, layout::rows_smem(tuning::DEFAULT_ARCH, size))?, None)
        } else {
            return self.scan_long_rows(stream, input, (rows, cols), output, op, exclusive, temp);
        };
        let name = format!("{name}_{}_{}", T::TYPE.name(), op.name());
        let f = self.kernel(&name)?;
        let flags = if exclusive { scan_abi::flags::EXCLUSIVE } else { 0 };
        let (i, _r) = input.device_ptr(stream);
        let (o, _w) = output.device_ptr_mut(stream);
        let mut b = stream.launch_builder(&f);
        b.arg(&i).arg(&o).arg(&rows).arg(&cols);
        if let Some(per_tile) = &per_tile {
            b.arg(per_tile);
        }
        b.arg(&flags);
        // SAFETY: matches batched_kernels! in gpu/ (the short-row kernel takes rows per tile
        // before the flags); input and output hold rows × cols elements.
        unsafe { b.launch(cfg) }.map(drop).map_err(|e| Error::kernel(&name, e))
    }

    /// Few rows longer than a tile: one launch of the pipelined kernel, each row a chain of its
    /// own tiles (see [`long_rows_pipelined`]), else one launch of a chain of one-tile-per-block
    /// tiles per row.
    #[allow(clippy::too_many_arguments)]
    fn scan_long_rows<T: Element>(
        &self,
        stream: &Arc<CudaStream>,
        input: &CudaSlice<T>,
        (rows, cols): (u64, u64),
        output: &mut CudaSlice<T>,
        op: Op,
        exclusive: bool,
        temp: &mut TempStorage,
    ) -> Result<()> {
        if long_rows_pipelined(rows, cols, T::TYPE, op) {
            let opts = ScanOptions::new(op).exclusive(exclusive);
            let (i, _r) = input.device_ptr(stream);
            let (o, _w) = output.device_ptr_mut(stream);
            let job = Job { gpu: self, stream, input: i, output: o, n: rows * cols, opts: &opts };
            let name = format!("{}_{}_{}", names::BATCHED_ROWS_PIPELINED, T::TYPE.name(), op.name());
            let p = tuning::pipeline_of(tuning::DEFAULT_ARCH, T::TYPE, op);
            let result = single_pass::launch_pipelined(&job, &name, p, T::identity(op)?, Some(cols), temp);
            return temp.poison_on_error(result);
        }
        let size = T::TYPE.size();
        let shape = tuning::single_pass(tuning::DEFAULT_ARCH, size);
        let per_row = cols.div_ceil(shape.tile() as u64);
        let tiles = rows * per_row;
        let too_many = || Error::invalid(format!("a {rows} x {cols} matrix is too many row tiles"));
        let advance = u32::try_from(tiles).map_err(|_| too_many())?;
        let per_row = u32::try_from(per_row).map_err(|_| too_many())?;
        let (base, epoch, counter_base) = temp.single_pass(self, stream, status::temp_bytes(tiles, size), advance)?;
        let name = format!("{}_{}_{}", names::BATCHED_LONG_ROWS, T::TYPE.name(), op.name());
        let f = self.kernel(&name)?;
        let flags = if exclusive { scan_abi::flags::EXCLUSIVE } else { 0 };
        let cfg = grid(tiles, shape.threads, layout::single_pass_smem(tuning::DEFAULT_ARCH, size))?;
        let (i, _r) = input.device_ptr(stream);
        let (o, _w) = output.device_ptr_mut(stream);
        let mut b = stream.launch_builder(&f);
        b.arg(&i).arg(&o).arg(&cols).arg(&per_row).arg(&flags).arg(&base).arg(&counter_base).arg(&epoch);
        // SAFETY: matches batched_kernels! in gpu/; input and output hold rows × cols elements,
        // the tile state one status word per tile.
        temp.poison_on_error(unsafe { b.launch(cfg) }.map(drop).map_err(|e| Error::kernel(&name, e)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn aligned_rows_of_4_and_8_byte_elements_take_the_vector_column_tiles() {
        if std::env::var_os("GPU_SCAN_COLUMN_VEC").is_some() {
            return;
        }
        assert!(uses_columns_vec(256, 4, true) && uses_columns_vec(16, 4, true) && uses_columns_vec(2, 8, true));
        assert!(!uses_columns_vec(256, 4, false), "input or output off 16-byte boundaries");
        assert!(!uses_columns_vec(255, 4, true) && !uses_columns_vec(3, 8, true), "rows that break the alignment");
    }

    #[test]
    fn column_tiles_in_shared_memory_take_rows_of_up_to_32_vectors_and_more_than_one_tile() {
        if std::env::var_os("GPU_SCAN_COLUMN_BULK_ITEMS").is_some() {
            return;
        }
        let (four, eight) =
            (tuning::columns_bulk(tuning::DEFAULT_ARCH, 4), tuning::columns_bulk(tuning::DEFAULT_ARCH, 8));
        let tile = |tpr: u32, shape: tuning::TileShape| {
            Some(BulkTiles { tpr, items: shape.items, tile_rows: shape.tile_rows(tpr) })
        };
        assert_eq!(column_bulk_tiles(1 << 24, 16, 4, true), tile(4, four));
        assert_eq!(column_bulk_tiles(1 << 24, 128, 4, true), tile(32, four));
        assert_eq!(column_bulk_tiles(1 << 24, 2, 8, true), tile(1, eight));
        assert_eq!(column_bulk_tiles(1 << 24, 64, 8, true), tile(32, eight));
        let (rows4, rows8) = (four.tile_rows(4), eight.tile_rows(8));
        assert_eq!(
            column_bulk_tiles(rows4 + 1, 16, 4, true).map(|t| t.tile_rows),
            Some(256 / 4 * u64::from(four.items))
        );
        assert_eq!(column_bulk_tiles(rows4, 16, 4, true), None, "one tile");
        assert_eq!(column_bulk_tiles(rows8, 16, 8, true), None, "one tile");
        assert_eq!(column_bulk_tiles(1 << 24, 16, 4, false), None, "off 16-byte boundaries");
        assert_eq!(column_bulk_tiles(1 << 24, 256, 4, true), None, "wider than 32 vectors");
        assert_eq!(column_bulk_tiles(1 << 24, 48, 4, true), None, "12 vectors");
        assert_eq!(column_bulk_tiles(1 << 24, 18, 4, true), None, "not whole vectors");
        if std::env::var_os("GPU_SCAN_COLUMN_BULK").is_none() {
            assert_eq!(column_bulk_plan(1 << 24, 4, 4, true), tile(1, four));
            assert_eq!(column_bulk_plan(1 << 24, 64, 4, true), tile(16, four));
            assert_eq!(column_bulk_plan(1 << 24, 32, 8, true), tile(16, eight));
            assert_eq!(column_bulk_plan(1 << 24, 128, 4, true), tile(32, four));
            assert_eq!(column_bulk_plan(1 << 24, 64, 8, true), tile(32, eight));
            assert_eq!(column_bulk_plan(1 << 24, 256, 4, true), None, "wider than 32 vectors");
            assert_eq!(column_bulk_plan(1 << 24, 16, 4, false), None, "off 16-byte boundaries");
        }
    }

    #[test]
    fn column_tiles_in_shared_memory_leave_two_blocks_to_an_h200_sm_and_no_taller_would() {
        // An H200 SM has 228 KiB of shared memory, 1 KiB of it reserved for each block.
        let fits_two = |smem: u32| 2 * (smem + 1024) <= 228 * 1024;
        for size in [4, 8] {
            let items = tuning::columns_bulk(tuning::DEFAULT_ARCH, size).items;
            assert!(fits_two(layout::columns_bulk_smem(tuning::DEFAULT_ARCH, size, items)), "{size}-byte elements");
            assert!(
                !fits_two(layout::columns_bulk_smem(tuning::DEFAULT_ARCH, size, items + 1)),
                "{size}-byte elements"
            );
        }
    }

    #[test]
    fn strips_cover_the_columns_evenly() {
        let tall = 1 << 20;
        let (it4, it8) = (rows_per_group(4), rows_per_group(8));
        assert_eq!(column_plan(tall, 8, 4), (8, 32, 32 * it4));
        assert_eq!(column_plan(tall, 64, 4), (16, 16, 16 * it4));
        assert_eq!(column_plan(tall, 65, 4), (13, 19, 19 * it4));
        assert_eq!(column_plan(tall, 4096, 4), (32, 8, 8 * it4));
        assert_eq!(column_plan(tall, 16384, 8), (64, 4, 4 * it8));
        assert_eq!(column_plan(tall, 2, 4), (2, 32, 32 * it4));
        for cols in 2..2000u64 {
            let (strip, groups, _) = column_plan(tall, cols, 4);
            assert!(strip <= tuning::column_strip(tuning::DEFAULT_ARCH, cols) && groups >= 1, "{cols}");
            let strips = cols.div_ceil(strip as u64);
            assert!(strips * strip as u64 - cols < strips, "{cols}: strips {strips} of {strip}");
        }
    }

    /// Rows each thread group of the scalar column tiles covers for `elem_size`-byte elements.
    fn rows_per_group(elem_size: usize) -> u64 {
        tuning::columns(tuning::DEFAULT_ARCH, elem_size).items as u64
    }

    #[test]
    fn few_rows_widen_the_strips_so_no_group_idles() {
        let it = rows_per_group(4);
        assert_eq!(column_plan(8, 1 << 25, 4), (256, 1, it));
        assert_eq!(column_plan(it + 8, 1 << 20, 4), (128, 2, 2 * it));
        assert_eq!(column_plan(4 * it - 1, 1 << 20, 4), (64, 4, 4 * it));
        assert_eq!(column_plan(1000, 1 << 20, 4), (64, 4, 4 * it));
        assert_eq!(column_plan(1 << 20, 1 << 20, 4), (64, 4, 4 * it));
        assert_eq!(column_plan(8, 100, 4), (100, 2, 2 * it));
        for rows in 1..300u64 {
            let (strip, groups, tile_rows) = column_plan(rows, 1 << 20, 4);
            assert!(groups as u64 * tuning::columns(tuning::DEFAULT_ARCH, 4).items as u64 == tile_rows, "{rows}");
            assert!(strip * groups <= 256 && (tile_rows >= rows || strip <= 64), "{rows}: {strip} x {groups}");
        }
    }

    /// A column's look-back on the CPU: the sum of the entries before row block `chunk` in
    /// `status` ((aggregate, inclusive prefix) per slot), walking aggregates back until it stops
    /// at a prefix; where it stops stands for timing, picked by `stop`.
    fn look_back(status: &[(u32, u32)], slot: impl Fn(u64) -> usize, chunk: u64, stop: u64) -> u32 {
        let mut prefix = 0u32;
        for k in (0..chunk).rev() {
            let (aggregate, inclusive) = status[slot(k)];
            if k == 0 || (k + stop).is_multiple_of(3) {
                return prefix.wrapping_add(inclusive);
            }
            prefix = prefix.wrapping_add(aggregate);
        }
        prefix
    }

    /// The column kernel's algorithm, thread by thread on the CPU, for wrapping u32 sums: tile
    /// numbering across strips, thread groups of consecutive rows, the groups' totals combined
    /// per column, and a per-column look-back that walks aggregates back to some published
    /// prefix (which one depends on timing: `stop` picks it). It must equal the scan of every
    /// column for any shape, inclusive and exclusive.
    fn emulate(x: &[u32], rows: u64, cols: u64, exclusive: bool, stop: u64) -> Vec<u32> {
        let it = tuning::columns(tuning::DEFAULT_ARCH, 4).items as u64;
        let threads = tuning::columns(tuning::DEFAULT_ARCH, 4).threads as u64;
        let (strip, groups, tile_rows) = column_plan(rows, cols, 4);
        let (strip, groups) = (strip as u64, groups as u64);
        let strips = cols.div_ceil(strip);
        let tiles = rows.div_ceil(tile_rows) * strips;
        // (aggregate, inclusive prefix) per (row block, column)
        let mut status: Vec<(u32, u32)> = vec![(0, 0); (rows.div_ceil(tile_rows) * cols) as usize];
        let mut out = vec![u32::MAX; x.len()];
        for tile in 0..tiles {
            let (chunk, s) = (tile / strips, tile % strips);
            let mut totals = vec![0u32; threads as usize];
            let mut vals = vec![vec![0u32; it as usize]; threads as usize];
            for t in 0..threads {
                let (g, c) = (t / strip, t % strip);
                let (col, row0) = (s * strip + c, chunk * tile_rows + g * it);
                if g >= groups || col >= cols {
                    continue;
                }
                let mut run = 0u32;
                for k in 0..it {
                    if row0 + k < rows {
                        run = run.wrapping_add(x[((row0 + k) * cols + col) as usize]);
                    }
                    vals[t as usize][k as usize] = run;
                }
                totals[(g * strip + c) as usize] = run;
            }
            for t in 0..threads {
                let (g, c) = (t / strip, t % strip);
                let (col, row0) = (s * strip + c, chunk * tile_rows + g * it);
                if g >= groups || col >= cols {
                    continue;
                }
                let before: u32 = (0..g).map(|h| totals[(h * strip + c) as usize]).fold(0, u32::wrapping_add);
                let total: u32 = (0..groups).map(|h| totals[(h * strip + c) as usize]).fold(0, u32::wrapping_add);
                let slot = |k: u64| (k * cols + col) as usize;
                let mut prefix = 0u32;
                if g == 0 {
                    prefix = look_back(&status, slot, chunk, stop);
                    status[slot(chunk)] = (total, prefix.wrapping_add(total));
                } else if chunk > 0 {
                    prefix = status[slot(chunk)].1.wrapping_sub(total);
                }
                let p = prefix.wrapping_add(before);
                for k in 0..it {
                    if row0 + k < rows {
                        let inclusive = p.wrapping_add(vals[t as usize][k as usize]);
                        let previous = if k == 0 { p } else { p.wrapping_add(vals[t as usize][k as usize - 1]) };
                        out[((row0 + k) * cols + col) as usize] = if exclusive { previous } else { inclusive };
                    }
                }
            }
        }
        out
    }

    /// The vector column kernel's algorithm, thread by thread on the CPU, for wrapping u32 sums
    /// laid out as the kernels of 8-byte types are (vectors of 2 columns): each thread's run of
    /// rows, the shuffle scan across a warp's groups (lanes `tpr` apart; a lane below `delta`
    /// keeps its own value), the warps' totals, and a per-column look-back by the strip's first
    /// threads that stops as `emulate`'s does.
    fn emulate_vec(x: &[u32], rows: u64, cols: u64, exclusive: bool, stop: u64) -> Vec<u32> {
        let size = tuning::VECTOR_BYTES / 2;
        let (tpr, _) = column_vec_plan(rows, cols, size);
        emulate_vector_tiles(x, rows, cols, exclusive, stop, tpr, tuning::columns_vec(tuning::DEFAULT_ARCH, size))
    }

    /// The column tiles in shared memory, whose algorithm is the vector tiles' with the bulk
    /// kernel's tile shape (an odd number of rows a thread) and a row of one strip.
    fn emulate_bulk(x: &[u32], rows: u64, cols: u64, exclusive: bool, stop: u64) -> Vec<u32> {
        let size = tuning::VECTOR_BYTES / 2;
        let bulk = column_bulk_tiles(rows, cols, size, true).expect("a matrix the bulk tiles take");
        let shape = tuning::columns_bulk_at(tuning::DEFAULT_ARCH, size, bulk.items);
        emulate_vector_tiles(x, rows, cols, exclusive, stop, bulk.tpr, shape)
    }

    /// [`emulate_vec`]'s algorithm for `tpr` threads a row and tiles of `shape`.
    fn emulate_vector_tiles(
        x: &[u32],
        rows: u64,
        cols: u64,
        exclusive: bool,
        stop: u64,
        tpr: u32,
        shape: tuning::TileShape,
    ) -> Vec<u32> {
        const V: usize = 2;
        type Vector = [u32; V];
        let add = |a: Vector, b: Vector| -> Vector { std::array::from_fn(|e| a[e].wrapping_add(b[e])) };
        let (threads, it) = (shape.threads as u64, shape.items as usize);
        let tile_rows = shape.tile_rows(tpr);
        let (tpr, v) = (tpr as u64, V as u64);
        let strip = v * tpr;
        let (strips, chunks) = (cols.div_ceil(strip), rows.div_ceil(tile_rows));
        let mut status: Vec<(u32, u32)> = vec![(0, 0); (chunks * cols) as usize];
        let mut out = vec![u32::MAX; x.len()];
        let place = |t: u64, chunk: u64, s: u64| (s * strip + (t % tpr) * v, chunk * tile_rows + (t / tpr) * it as u64);
        for tile in 0..chunks * strips {
            let (chunk, s) = (tile / strips, tile % strips);
            let vals: Vec<Vec<Vector>> = (0..threads)
                .map(|t| {
                    let (col, row0) = place(t, chunk, s);
                    let mut run = [0u32; V];
                    (0..it as u64)
                        .map(|k| {
                            if col < cols && row0 + k < rows {
                                let i = ((row0 + k) * cols + col) as usize;
                                run = add(run, x[i..i + V].try_into().unwrap());
                            }
                            run
                        })
                        .collect()
                })
                .collect();
            let mut run: Vec<Vector> = vals.iter().map(|v| v[it - 1]).collect();
            let mut delta = tpr;
            while delta < 32 {
                let up = run.clone();
                for t in 0..threads as usize {
                    if t as u64 % 32 >= delta {
                        run[t] = add(up[t - delta as usize], run[t]);
                    }
                }
                delta *= 2;
            }
            let warp_total = |w: u64, c: u64| run[(w * 32 + 32 - tpr + c) as usize];
            let mut prefixes = vec![0u32; strip as usize];
            for j in 0..strip {
                let col = s * strip + j;
                if col >= cols || chunks == 1 {
                    continue;
                }
                let total = (0..threads / 32).fold(0u32, |a, w| a.wrapping_add(warp_total(w, j / v)[(j % v) as usize]));
                let slot = |k: u64| (k * cols + col) as usize;
                let prefix = look_back(&status, slot, chunk, stop);
                status[slot(chunk)] = (total, prefix.wrapping_add(total));
                prefixes[j as usize] = prefix;
            }
            for t in 0..threads {
                let (col, row0) = place(t, chunk, s);
                if col >= cols {
                    continue;
                }
                let (w, c) = (t / 32, t % tpr);
                let mut p: Vector =
                    if chunk > 0 { std::array::from_fn(|e| prefixes[(c * v) as usize + e]) } else { [0; V] };
                for u in 0..w {
                    p = add(p, warp_total(u, c));
                }
                if t % 32 >= tpr {
                    p = add(p, run[(t - tpr) as usize]);
                }
                for k in 0..it {
                    let r = row0 + k as u64;
                    if r < rows {
                        let (previous, through) =
                            (if k == 0 { [0; V] } else { vals[t as usize][k - 1] }, vals[t as usize][k]);
                        let i = (r * cols + col) as usize;
                        out[i..i + V].copy_from_slice(&add(p, if exclusive { previous } else { through }));
                    }
                }
            }
        }
        out
    }

    #[test]
    fn the_vector_column_plan_keeps_strips_of_whole_warps_and_widens_them_for_few_rows() {
        let tall = 1 << 20;
        let it = tuning::columns_vec(tuning::DEFAULT_ARCH, 8).items as u64;
        assert_eq!(column_vec_plan(tall, 256, 4), (4, 64 * it));
        assert_eq!(column_vec_plan(tall, 256, 8), (8, 32 * it));
        assert_eq!(column_vec_plan(tall, 4096, 4), (8, 32 * it));
        assert_eq!(column_vec_plan(tall, 16384, 8), (32, 8 * it));
        assert_eq!(column_vec_plan(tall, 4, 4), (1, 256 * it));
        assert_eq!(column_vec_plan(tall, 12, 4), (4, 64 * it), "three vectors: a strip of four, one idle");
        assert_eq!(column_vec_plan(20, 1024, 4), (32, 8 * it));
        assert_eq!(column_vec_plan(8 * it + 1, 1024, 4), (16, 16 * it));
        for rows in 1..3000u64 {
            for cols in [4u64, 8, 12, 64, 256, 1024, 1 << 20] {
                let (tpr, tile_rows) = column_vec_plan(rows, cols, 4);
                assert!(tpr.is_power_of_two() && tpr <= 32, "{rows} x {cols}");
                assert_eq!(tile_rows, 256 / tpr as u64 * it);
                assert!(tpr == 32 || tile_rows / 2 < rows || tpr as u64 * 4 >= cols, "{rows} x {cols}: {tpr}");
            }
        }
    }

    /// `emulate` (a column kernel's algorithm on the CPU) against the scan of every column of
    /// each shape, inclusive and exclusive, for every place a look-back may stop.
    fn check_emulation(shapes: &[(u64, u64)], emulate: fn(&[u32], u64, u64, bool, u64) -> Vec<u32>) {
        for &(rows, cols) in shapes {
            let x: Vec<u32> = (0..rows * cols).map(|i| crate::input::bits(rows ^ cols, i) as u32).collect();
            for exclusive in [false, true] {
                let mut want = vec![0u32; x.len()];
                for c in 0..cols {
                    let mut run = 0u32;
                    for r in 0..rows {
                        let i = (r * cols + c) as usize;
                        want[i] = if exclusive { run } else { run.wrapping_add(x[i]) };
                        run = run.wrapping_add(x[i]);
                    }
                }
                for stop in 0..3 {
                    let got = emulate(&x, rows, cols, exclusive, stop);
                    assert_eq!(got, want, "{rows}x{cols} exclusive={exclusive} stop={stop}");
                }
            }
        }
    }

    #[test]
    fn the_vector_column_kernels_algorithm_equals_the_scan_of_every_column() {
        let shapes = [(1, 4), (7, 4), (9, 12), (1025, 8), (300, 64), (129, 200), (5, 1000), (3000, 4), (600, 52)];
        check_emulation(&shapes, emulate_vec);
    }

    #[test]
    fn the_bulk_column_kernels_algorithm_equals_the_scan_of_every_column() {
        // Tile heights for 1 to 32 vectors a row (2 to 64 columns here): one past a tile, one
        // past two, and partial tiles after several.
        let shape = tuning::columns_bulk_at(tuning::DEFAULT_ARCH, 8, column_bulk_items(8));
        let t = |tpr| shape.tile_rows(tpr);
        let shapes = [
            (t(1) + 1, 2),
            (2 * t(1) + 1, 2),
            (t(2) + 1, 4),
            (2 * t(2) + 160, 4),
            (t(8) + 1, 16),
            (4 * t(16) + 40, 32),
            (t(32) + 1, 64),
            (16 * t(32) + 80, 64),
        ];
        check_emulation(&shapes, emulate_bulk);
    }

    #[test]
    fn the_column_kernels_algorithm_equals_the_scan_of_every_column() {
        check_emulation(&[(1, 2), (7, 3), (1025, 8), (300, 65), (129, 200), (5, 1000), (2000, 2)], emulate);
    }

    #[test]
    fn long_rows_and_many_go_to_the_row_kernel() {
        assert!(uses_row_kernel(16384, 16384, 4) && uses_row_kernel(256, 1 << 20, 4));
        assert!(!uses_row_kernel(1 << 20, 8, 4));
        assert!(!uses_row_kernel(8, 1 << 20, 4));
    }

    #[test]
    fn vector_column_tiles_of_few_strips_look_back_four_tiles_a_round() {
        if std::env::var_os("GPU_SCAN_COLUMN_WINDOW").is_some() {
            return;
        }
        assert_eq!(
            (column_lookback_window(1, 4), column_lookback_window(4, 4), column_lookback_window(16, 4)),
            (4, 4, 1)
        );
        assert_eq!((column_lookback_window(1, 8), column_lookback_window(4, 8)), (4, 1));
    }

    #[test]
    fn large_matrices_of_16_and_32_byte_rows_and_few_very_long_rows_go_to_the_pipelined_kernel() {
        if std::env::var_os("GPU_SCAN_PIPELINED").is_some() {
            return;
        }
        let (rows, cols) = ((64u64 << 20) / 32, 8);
        assert!(uses_columns_pipelined(rows, cols, 4) && uses_columns_pipelined(rows, 4, 8));
        assert!(!uses_columns_pipelined(rows - 1, cols, 4), "below 64 MiB the column tiles are faster");
        assert!(
            !uses_columns_pipelined(rows, 7, 4)
                && !uses_columns_pipelined(rows, 16, 4)
                && !uses_columns_pipelined(rows, 8, 8)
        );
        let rows16 = tuning::PIPELINED_COLUMNS16_MIN_BYTES / 16;
        assert!(uses_columns_pipelined(rows16, 4, 4) && uses_columns_pipelined(rows16, 2, 8), "16-byte rows");
        assert!(!uses_columns_pipelined(rows16 - 1, 4, 4), "below 4 MiB, 16-byte rows stay with the column tiles");
        assert!(tuning::pipelined_column_rows(4, 4) && tuning::pipelined_column_rows(2, 8));
        let (rows, long) = (8, (8u64 << 20) / 4);
        assert!(long_rows_pipelined(rows, long, ElemType::F32, Op::Add));
        assert!(!long_rows_pipelined(rows / 2, long, ElemType::F32, Op::Add), "under 64 MiB in all");
        assert!(!long_rows_pipelined(rows, long + 1, ElemType::F32, Op::Add), "rows that break 16-byte alignment");
        let short = 15 * tuning::pipeline(tuning::DEFAULT_ARCH, 4).tile() as u64;
        assert!(!long_rows_pipelined(1 << 20, short, ElemType::F32, Op::Add), "rows of under 16 tiles");
    }

    #[test]
    fn short_row_tiles_hold_whole_rows_and_start_aligned_when_that_costs_little() {
        let tile = tuning::short_rows(tuning::DEFAULT_ARCH, 4).tile() as u64;
        assert_eq!(short_rows_per_tile(8, 4), Some(tile / 8));
        assert_eq!(short_rows_per_tile(tile, 4), Some(1));
        assert_eq!(short_rows_per_tile(tile + 1, 4), None);
        assert_eq!(short_rows_per_tile(0, 4), None);
        assert_eq!(short_rows_per_tile(tile - 1, 4), Some(1), "one unaligned row beats none");
        for size in [4, 8] {
            let tile = tuning::short_rows(tuning::DEFAULT_ARCH, size).tile() as u64;
            let v = tuning::vector_elems(size) as u64;
            for cols in 1..=tile {
                let r = short_rows_per_tile(cols, size).unwrap();
                let fit = tile / cols;
                assert!(r >= 1 && r * cols <= tile && 2 * r >= fit, "{cols}");
                assert!((r * cols).is_multiple_of(v) || r == fit, "{cols}: {r} rows per tile");
            }
        }
    }
}
