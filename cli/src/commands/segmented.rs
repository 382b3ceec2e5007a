//! `segmented` and `batched`: scans of every segment (random heads, or rows of a fixed length)
//! and of every row or column of a row-major matrix, checked per segment against the CPU.

use crate::args::{
    host_len, positive, AxisArg, BatchedKernelArg, BatchedOp, BatchedType, Global, Runs, SegmentedOp, SegmentedType,
};
use crate::experiment::{self, first_difference, Check, Experiment, Needs};
use crate::memory::{self, bytes_of, total};
use clap::Args;
use gpu_scan::cudarc::driver::CudaSlice;
use gpu_scan::plan::batched::BatchedRequest;
use gpu_scan::reference::apps as reference;
use gpu_scan::{
    input, with_elem_type, Axis, BatchedOptions, Element, Error, Gpu, Matrix, Op, Result, SegmentedOptions, TempStorage,
};

#[derive(Args)]
pub struct SegmentedArgs {
    /// Number of elements (100000000, 1e8, 2^28).
    #[arg(value_parser = positive)]
    n: u64,
    /// Element type.
    #[arg(long = "type", value_name = "TYPE", default_value = "u32")]
    ty: SegmentedType,
    /// The operator combining the elements of a segment.
    #[arg(long, default_value = "add")]
    op: SegmentedOp,
    /// Exclusive scans (a segment's first element gets the identity).
    #[arg(long)]
    exclusive: bool,
    /// Mean segment length of the random heads (at least 1).
    #[arg(long, default_value_t = 1000, value_parser = positive)]
    mean_length: u64,
    /// Fixed segments of this many elements instead (N must be a multiple): the rows of a matrix.
    #[arg(long, value_parser = positive)]
    rows_of: Option<u64>,
    #[command(flatten)]
    runs: Runs,
}

#[derive(Args)]
pub struct BatchedArgs {
    /// Rows of the matrix (at least 1).
    #[arg(value_parser = positive)]
    rows: u64,
    /// Columns of the matrix (at least 1): a row's elements are adjacent in memory.
    #[arg(value_parser = positive)]
    cols: u64,
    /// Scan down every column or along every row.
    #[arg(long, default_value = "columns")]
    axis: AxisArg,
    /// Element type.
    #[arg(long = "type", value_name = "TYPE", default_value = "u32")]
    ty: BatchedType,
    /// The operator combining the elements of a row or column.
    #[arg(long, default_value = "add")]
    op: BatchedOp,
    /// Exclusive scans (each row's or column's first element gets the identity).
    #[arg(long)]
    exclusive: bool,
    /// The kernel (auto picks by shape).
    #[arg(long, default_value = "auto")]
    kernel: BatchedKernelArg,
    #[command(flatten)]
    runs: Runs,
}

pub fn segmented(args: &SegmentedArgs, global: &Global) -> Result<bool> {
    let (tuning, _) = global.resolve()?;
    let (ty, op) = (args.ty.0, args.op.0);
    if let Some(cols) = args.rows_of.filter(|&c| !args.n.is_multiple_of(c)) {
        return Err(Error::invalid(format!("{} elements are not whole rows of {cols}", args.n)));
    }
    let plan = gpu_scan::plan::segmented::plan(&tuning, ty, op, args.n, args.exclusive)?;
    let n = host_len(args.n, "N")?;
    let what = format!("a segmented scan of {} {}", args.n, ty.name());
    let bytes = bytes_of(args.n, ty.size() as u64, &what)?;
    // The input, its heads, the result read back and the CPU's.
    let needs = Needs {
        host: total(&[bytes, args.n, bytes, bytes], &what)?,
        device: total(&[bytes, args.n, bytes, plan.state.bytes()], &what)?,
        what,
    };
    let (seed, mean) = (args.runs.seed, args.mean_length);
    with_elem_type!(ty, T => {
        let make = || -> Result<Segmented<T>> {
            let heads = match args.rows_of {
                Some(_) => Vec::new(),
                None => memory::from_fn(n, "the segment heads", |i| input::bits(seed ^ 0x5e9, i as u64).is_multiple_of(mean) as u8)?,
            };
            let data = memory::generate::<T>(op, seed, n)?;
            let opts = SegmentedOptions::new(op).exclusive(args.exclusive);
            Ok(Segmented { data, heads, rows_of: args.rows_of, mean, opts, buffers: None, temp: TempStorage::new() })
        };
        Ok(experiment::run(global, args.runs.iters, &needs, make)?.passed)
    })
}

struct Segmented<T> {
    data: Vec<T>,
    heads: Vec<u8>,
    rows_of: Option<u64>,
    mean: u64,
    opts: SegmentedOptions,
    buffers: Option<(CudaSlice<T>, CudaSlice<u8>, CudaSlice<T>)>,
    temp: TempStorage,
}

impl<T> Segmented<T> {
    fn head(&self, i: usize) -> bool {
        match self.rows_of {
            Some(c) => (i as u64).is_multiple_of(c),
            None => self.heads[i] != 0,
        }
    }
}

impl<T: Element> Experiment for Segmented<T> {
    fn title(&self) -> String {
        let what = match self.rows_of {
            Some(c) => format!("{} rows of {c}", self.data.len() as u64 / c),
            None => format!("{} segments (mean length {})", self.heads.iter().filter(|&&h| h != 0).count(), self.mean),
        };
        let kind = if self.opts.exclusive { "exclusive" } else { "inclusive" };
        format!("segmented: n={} {} {} {kind}, {what}", self.data.len(), T::TYPE.name(), self.opts.op.name())
    }

    fn traffic(&self) -> (u64, u64) {
        let bytes = (self.data.len() * T::TYPE.size()) as u64;
        (2 * bytes + self.heads.len() as u64, bytes)
    }

    fn prepare(&mut self, gpu: &Gpu) -> Result<()> {
        let stream = gpu.stream().clone();
        let d_in = gpu.upload(&stream, "segmented input", &self.data)?;
        let d_heads = gpu.upload(&stream, "segment heads", &self.heads)?;
        let d_out = gpu.alloc_zeros::<T>(&stream, "segmented output", self.data.len())?;
        self.buffers = Some((d_in, d_heads, d_out));
        Ok(())
    }

    fn run(&mut self, gpu: &Gpu) -> Result<()> {
        let (d_in, d_heads, d_out) = self.buffers.as_mut().expect("prepared");
        match self.rows_of {
            Some(c) => gpu.segmented_scan_fixed(gpu.stream(), d_in, c, d_out, &self.opts, &mut self.temp),
            None => gpu.segmented_scan(gpu.stream(), d_in, d_heads, d_out, &self.opts, &mut self.temp),
        }
    }

    fn check(&mut self, gpu: &Gpu) -> Result<Check> {
        let (_, _, d_out) = self.buffers.as_ref().expect("prepared");
        let got = gpu.download(gpu.stream(), d_out)?;
        let (op, exclusive) = (self.opts.op, self.opts.exclusive);
        let want = reference::segmented(op, &self.data, |i| self.head(i), exclusive)?;
        let wrong = segment_check(op, &self.data, &got, &want, |i| self.head(i));
        Ok(Check::new(format!("{} elements, every segment on its own", self.data.len()), wrong))
    }
}

/// Compares a segmented result with the sequential per-segment one: exactly for exact
/// operators; for float sums within 64 roundings of the segment's sum of magnitudes, for float
/// products within 2·eps per factor.
fn segment_check<T: Element>(
    op: Op,
    data: &[T],
    got: &[T],
    want: &[T],
    head: impl Fn(usize) -> bool,
) -> Option<String> {
    if !op.order_sensitive(T::TYPE) {
        return first_difference(got, want);
    }
    let eps = if T::TYPE.size() == 4 { f32::EPSILON as f64 } else { f64::EPSILON };
    let (mut mag, mut len) = (0.0f64, 0.0f64);
    for i in 0..data.len() {
        if head(i) {
            (mag, len) = (0.0, 0.0);
        }
        mag += data[i].to_f64().abs();
        len += 1.0;
        let (g, w) = (got[i].to_f64(), want[i].to_f64());
        let bound = if op == Op::Add { 64.0 * eps * mag } else { 2.0 * eps * len * w.abs() };
        if !(g == w || (g - w).abs() <= bound || (g.is_nan() && w.is_nan())) {
            return Some(format!("element {i}: expected {} within {bound:e}, got {}", want[i], got[i]));
        }
    }
    None
}

pub fn batched(args: &BatchedArgs, global: &Global) -> Result<bool> {
    let (tuning, _) = global.resolve()?;
    let (ty, op) = (args.ty.0, args.op.0);
    let n = args.rows.checked_mul(args.cols).ok_or_else(|| Error::invalid("ROWS x COLS overflows"))?;
    let len = host_len(n, "ROWS x COLS")?;
    let opts = BatchedOptions::new(args.axis.0, op).exclusive(args.exclusive).kernel(args.kernel.0);
    let matrix = Matrix::new(args.rows, args.cols);
    let request = BatchedRequest {
        ty,
        op,
        exclusive: args.exclusive,
        matrix,
        axis: args.axis.0,
        kernel: args.kernel.0,
        aligned: true,
    };
    let (state, scratch) = gpu_scan::plan::batched::plan(&tuning, &request)?.temp_bytes();
    let what = format!("a batched scan of {} x {} {}", args.rows, args.cols, ty.name());
    let bytes = bytes_of(n, ty.size() as u64, &what)?;
    // The input, the result read back and the CPU's; down the columns the check also transposes
    // the input and the result.
    let copies = if args.axis.0 == Axis::Columns { 5 } else { 3 };
    let needs =
        Needs { host: bytes_of(bytes, copies, &what)?, device: total(&[bytes, bytes, state, scratch], &what)?, what };
    with_elem_type!(ty, T => {
        let make = || -> Result<Batched<T>> {
            let data = memory::generate::<T>(op, args.runs.seed, len)?;
            Ok(Batched { data, matrix, opts, buffers: None, temp: TempStorage::new() })
        };
        Ok(experiment::run(global, args.runs.iters, &needs, make)?.passed)
    })
}

struct Batched<T> {
    data: Vec<T>,
    matrix: Matrix,
    opts: BatchedOptions,
    buffers: Option<(CudaSlice<T>, CudaSlice<T>)>,
    temp: TempStorage,
}

impl<T: Element> Experiment for Batched<T> {
    fn title(&self) -> String {
        let along = if self.opts.axis == Axis::Rows { "along each row" } else { "down each column" };
        let Matrix { rows, cols } = self.matrix;
        format!("batched: {rows} x {cols} {} {} {along}", T::TYPE.name(), self.opts.op.name())
    }

    fn traffic(&self) -> (u64, u64) {
        experiment::read_write_once::<T>(self.data.len())
    }

    fn prepare(&mut self, gpu: &Gpu) -> Result<()> {
        self.buffers = Some(experiment::in_and_out(gpu, &self.data)?);
        Ok(())
    }

    fn run(&mut self, gpu: &Gpu) -> Result<()> {
        let (d_in, d_out) = self.buffers.as_mut().expect("prepared");
        gpu.batched_scan(gpu.stream(), d_in, self.matrix, d_out, &self.opts, &mut self.temp)
    }

    fn check(&mut self, gpu: &Gpu) -> Result<Check> {
        let (_, d_out) = self.buffers.as_ref().expect("prepared");
        let got = gpu.download(gpu.stream(), d_out)?;
        // The CPU reference works on segments: rows as they are, columns after a transpose.
        let (r, c) = (self.matrix.rows as usize, self.matrix.cols as usize);
        let transpose = |v: &[T], rows: usize, cols: usize| -> Vec<T> {
            (0..cols).flat_map(|j| (0..rows).map(move |i| v[i * cols + j])).collect()
        };
        let (op, exclusive) = (self.opts.op, self.opts.exclusive);
        let wrong = if self.opts.axis == Axis::Rows {
            let want = reference::segmented(op, &self.data, |i| i % c == 0, exclusive)?;
            segment_check(op, &self.data, &got, &want, |i| i % c == 0)
        } else {
            let data_t = transpose(&self.data, r, c);
            let want_t = reference::segmented(op, &data_t, |i| i % r == 0, exclusive)?;
            segment_check(op, &data_t, &transpose(&got, r, c), &want_t, |i| i % r == 0)
        };
        Ok(Check::new(format!("{} elements", self.data.len()), wrong))
    }
}
