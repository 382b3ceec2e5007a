//! `segmented` and `batched`: scans of every segment (random heads, or rows of a fixed length)
//! and of every row or column of a row-major matrix, checked per segment against the CPU.

use crate::args::{host_len, parse_count, AxisArg, BatchedKernelArg, Global, Operator, Runs, Type};
use crate::experiment::{self, first_difference, Check, Experiment};
use clap::Args;
use gpu_scan::cudarc::driver::CudaSlice;
use gpu_scan::plan::batched::supported;
use gpu_scan::reference::apps as reference;
use gpu_scan::{
    input, with_elem_type, Axis, BatchedOptions, Element, Error, Gpu, Matrix, Op, Result, SegmentedOptions, TempStorage,
};

/// What the segmented and batched scans compute.
#[derive(Args, Clone, Copy)]
pub struct SegmentScan {
    /// add, mul, min or max.
    #[arg(long, default_value = "add")]
    op: Operator,
    #[arg(long)]
    exclusive: bool,
}

#[derive(Args)]
pub struct SegmentedArgs {
    #[arg(value_parser = parse_count)]
    n: u64,
    /// Element type (u32, i32, u64, i64, f32, f64).
    #[arg(long = "type", default_value = "u32")]
    ty: Type,
    #[command(flatten)]
    scan: SegmentScan,
    /// Mean segment length of the random heads.
    #[arg(long, default_value_t = 1000, value_parser = clap::value_parser!(u64).range(1..))]
    mean_length: u64,
    /// Fixed segments of this many elements instead (N must be a multiple): the rows of a matrix.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    rows_of: Option<u64>,
    #[command(flatten)]
    runs: Runs,
}

#[derive(Args)]
pub struct BatchedArgs {
    #[arg(value_parser = parse_count)]
    rows: u64,
    #[arg(value_parser = parse_count)]
    cols: u64,
    /// Scan down every column or along every row.
    #[arg(long, default_value = "columns")]
    axis: AxisArg,
    /// Element type (u32, i32, u64, i64, f32, f64).
    #[arg(long = "type", default_value = "u32")]
    ty: Type,
    #[command(flatten)]
    scan: SegmentScan,
    /// The kernel (auto picks by shape).
    #[arg(long, default_value = "auto")]
    kernel: BatchedKernelArg,
    #[command(flatten)]
    runs: Runs,
}

pub fn segmented(args: &SegmentedArgs, global: &Global) -> Result<bool> {
    supported(args.ty.0, args.scan.op.0, "segmented")?;
    if let Some(cols) = args.rows_of.filter(|&c| !args.n.is_multiple_of(c)) {
        return Err(Error::invalid(format!("{} elements are not whole rows of {cols}", args.n)));
    }
    global.resolve()?;
    with_elem_type!(args.ty.0, T => {
        let n = host_len(args.n, "N")?;
        let heads: Vec<u8> = match args.rows_of {
            Some(_) => Vec::new(),
            None => (0..args.n).map(|i| input::bits(args.runs.seed ^ 0x5e9, i).is_multiple_of(args.mean_length) as u8).collect(),
        };
        let data = input::generate::<T>(args.scan.op.0, args.runs.seed, n);
        let opts = SegmentedOptions::new(args.scan.op.0).exclusive(args.scan.exclusive);
        let mut exp = Segmented { data, heads, rows_of: args.rows_of, mean: args.mean_length, opts, buffers: None, temp: TempStorage::new() };
        experiment::run(global, args.runs.iters, &mut exp)
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

    fn device_bytes(&self) -> u64 {
        self.data.len() as u64 * (2 * T::TYPE.size() as u64 + 1)
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
    supported(args.ty.0, args.scan.op.0, "batched")?;
    let n = args.rows.checked_mul(args.cols).ok_or_else(|| Error::invalid("ROWS x COLS overflows"))?;
    let n = host_len(n, "ROWS x COLS")?;
    let opts = BatchedOptions::new(args.axis.0, args.scan.op.0).exclusive(args.scan.exclusive).kernel(args.kernel.0);
    let matrix = Matrix::new(args.rows, args.cols);
    global.resolve()?;
    with_elem_type!(args.ty.0, T => {
        let data = input::generate::<T>(opts.op, args.runs.seed, n);
        let mut exp = Batched { data, matrix, opts, buffers: None, temp: TempStorage::new() };
        experiment::run(global, args.runs.iters, &mut exp)
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

    fn device_bytes(&self) -> u64 {
        2 * self.traffic().1
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
