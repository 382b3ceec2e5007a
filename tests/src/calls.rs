//! The library's asynchronous calls in the blocking forms the tests check results with: each
//! allocates its outputs, runs the call on the GPU's stream and reads the result back.

use gpu_scan::apps::histogram::Histogram;
use gpu_scan::cudarc::driver::CudaSlice;
use gpu_scan::{CompactOptions, CsrOptions, Element, Gpu, HistogramOptions, Keep, Result, SortOptions, TempStorage};

/// Compacts `input` into `output` (by `flags` when `opts` keeps by flags) and returns the count.
pub fn compact<T: Element>(
    gpu: &Gpu,
    input: &CudaSlice<T>,
    flags: Option<&CudaSlice<u8>>,
    output: &mut CudaSlice<T>,
    opts: &CompactOptions<T>,
    temp: &mut TempStorage,
) -> Result<u64> {
    let stream = gpu.stream().clone();
    let mut count = gpu.alloc_zeros::<u64>(&stream, "count", 1)?;
    match (opts.keep, flags) {
        (Keep::Flags, Some(f)) => gpu.compact_flagged(&stream, input, f, output, &mut count, opts, temp)?,
        _ => gpu.compact(&stream, input, output, &mut count, opts, temp)?,
    }
    gpu.read_count(&stream, &count)
}

/// Sorts `keys` (with `values` when given) in fresh temporary storage.
pub fn sort<T: Element>(gpu: &Gpu, keys: &mut CudaSlice<T>, values: Option<&mut CudaSlice<u32>>) -> Result<()> {
    sort_in(gpu, keys, values, &mut TempStorage::new())
}

/// Sorts `keys` (with `values` when given) in `temp`.
pub fn sort_in<T: Element>(
    gpu: &Gpu,
    keys: &mut CudaSlice<T>,
    values: Option<&mut CudaSlice<u32>>,
    temp: &mut TempStorage,
) -> Result<()> {
    let stream = gpu.stream().clone();
    match values {
        Some(v) => gpu.sort_pairs(&stream, keys, v, &SortOptions::new(), temp),
        None => gpu.sort(&stream, keys, &SortOptions::new(), temp),
    }
}

/// The histogram of `input`, downloaded.
pub fn histogram<T: Element>(gpu: &Gpu, input: &CudaSlice<T>, opts: &HistogramOptions) -> Result<Histogram> {
    gpu.histogram_blocking(gpu.stream(), input, opts, &mut TempStorage::new())
}

/// The bin counts alone of `input` (the last entry: outside the range), downloaded.
pub fn histogram_counts<T: Element>(gpu: &Gpu, input: &CudaSlice<T>, opts: &HistogramOptions) -> Result<Vec<u64>> {
    let stream = gpu.stream().clone();
    let mut counts = gpu.alloc_zeros::<u32>(&stream, "bin counts", opts.bins as usize + 1)?;
    gpu.histogram_counts(&stream, input, &mut counts, opts)?;
    Ok(gpu.download(&stream, &counts)?.into_iter().map(u64::from).collect())
}

/// Row offsets of the sorted COO rows `rows` of an `nrows`-row matrix; an error when a row
/// index is out of range.
pub fn coo_to_csr(gpu: &Gpu, rows: &CudaSlice<u32>, nrows: u32) -> Result<CudaSlice<u32>> {
    let stream = gpu.stream().clone();
    let mut offsets = gpu.alloc_zeros::<u32>(&stream, "offsets", nrows as usize + 1)?;
    gpu.coo_to_csr(&stream, rows, &mut offsets, &CsrOptions::new(), &mut TempStorage::new())?;
    let last = stream.clone_dtoh(&offsets.slice(nrows as usize..))?[0] as usize;
    if last != rows.len() {
        return Err(gpu_scan::Error::invalid(format!(
            "{} of {} row indices are not below {nrows}",
            rows.len() - last,
            rows.len()
        )));
    }
    Ok(offsets)
}

/// Row indices of the CSR matrix with row offsets `offsets`.
pub fn csr_to_coo(gpu: &Gpu, offsets: &CudaSlice<u32>) -> Result<CudaSlice<u32>> {
    let stream = gpu.stream().clone();
    let nnz = stream.clone_dtoh(&offsets.slice(offsets.len() - 1..))?[0] as usize;
    let mut rows = gpu.alloc_zeros::<u32>(&stream, "rows", nnz)?;
    gpu.csr_to_coo(&stream, offsets, &mut rows, &CsrOptions::new(), &mut TempStorage::new())?;
    Ok(rows)
}
