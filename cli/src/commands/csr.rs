//! `csr`: COO -> CSR row offsets of a generated sparse matrix with empty rows, and back to COO.

use crate::args::{host_len, parse_count, Global, Runs};
use crate::experiment::{self, first_difference, Check, Experiment};
use clap::Args;
use gpu_scan::cudarc::driver::CudaSlice;
use gpu_scan::reference::apps as reference;
use gpu_scan::{input, CsrOptions, Error, Gpu, Result, TempStorage};

#[derive(Args)]
pub struct CsrArgs {
    /// Number of nonzeros.
    #[arg(value_parser = parse_count)]
    nnz: u64,
    /// Number of rows (default nnz / 4; about 2% of rows are left empty on purpose).
    #[arg(long)]
    rows: Option<u32>,
    #[command(flatten)]
    runs: Runs,
}

/// A sorted COO row index array over `nrows` rows with about 2% of the rows empty.
fn sparse_rows(seed: u64, nnz: usize, nrows: u32) -> Vec<u32> {
    let mut rows: Vec<u32> = (0..nnz as u64)
        .map(|i| {
            let r = (input::bits(seed, i) % nrows as u64) as u32;
            if r % 50 == 7 {
                (r + 1) % nrows
            } else {
                r
            }
        })
        .collect();
    rows.sort_unstable();
    rows
}

pub fn run(args: &CsrArgs, global: &Global) -> Result<bool> {
    let nnz = host_len(args.nnz, "NNZ")?;
    let nrows = args.rows.unwrap_or((args.nnz / 4).clamp(1, u32::MAX as u64 - 1) as u32);
    if nrows == 0 {
        return Err(Error::invalid("--rows must be at least 1"));
    }
    if args.nnz >= u32::MAX as u64 {
        return Err(Error::invalid(format!("{nnz} nonzeros: 32-bit offsets hold fewer than 2^32")));
    }
    global.resolve()?;
    let mut exp = Csr { rows: sparse_rows(args.runs.seed, nnz, nrows), nrows, buffers: None, temp: TempStorage::new() };
    experiment::run(global, args.runs.iters, &mut exp)
}

struct Csr {
    rows: Vec<u32>,
    nrows: u32,
    /// Row indices and the last run's offsets.
    buffers: Option<(CudaSlice<u32>, Option<CudaSlice<u32>>)>,
    temp: TempStorage,
}

impl Experiment for Csr {
    fn title(&self) -> String {
        format!("csr: {} nonzeros in {} rows", self.rows.len(), self.nrows)
    }

    fn device_bytes(&self) -> u64 {
        4 * (3 * self.rows.len() as u64 + 2 * (self.nrows as u64 + 1))
    }

    fn traffic(&self) -> (u64, u64) {
        (4 * (self.rows.len() as u64 + self.nrows as u64), 2 * self.rows.len() as u64)
    }

    fn prepare(&mut self, gpu: &Gpu) -> Result<()> {
        self.buffers = Some((gpu.upload(gpu.stream(), "row indices", &self.rows)?, None));
        Ok(())
    }

    fn run(&mut self, gpu: &Gpu) -> Result<()> {
        let (rows, offsets) = self.buffers.as_mut().expect("prepared");
        // The last run's offsets go first, so that a run allocates into the memory it frees.
        *offsets = None;
        let mut out = gpu.alloc_zeros::<u32>(gpu.stream(), "row offsets", self.nrows as usize + 1)?;
        gpu.coo_to_csr(gpu.stream(), rows, &mut out, &CsrOptions::new(), &mut self.temp)?;
        *offsets = Some(out);
        Ok(())
    }

    fn check(&mut self, gpu: &Gpu) -> Result<Check> {
        let stream = gpu.stream();
        let (_, offsets) = self.buffers.as_ref().expect("prepared");
        let offsets = offsets.as_ref().expect("run");
        let got = gpu.download(stream, offsets)?;
        let want = reference::csr_offsets(&self.rows, self.nrows);
        let mut back = gpu.alloc_zeros::<u32>(stream, "row indices", self.rows.len())?;
        gpu.csr_to_coo(stream, offsets, &mut back, &CsrOptions::new(), &mut self.temp)?;
        let round_trip = gpu.download(stream, &back)?;
        let wrong = first_difference(&got, &want)
            .map(|d| format!("offsets: {d}"))
            .or_else(|| first_difference(&round_trip, &self.rows).map(|d| format!("round trip: {d}")));
        let mut check = Check::new("row offsets and the round trip back to COO", wrong);
        let empty = want.windows(2).filter(|w| w[0] == w[1]).count();
        check.notes.push(format!("row offsets: {} entries, {empty} empty rows", got.len()));
        Ok(check)
    }
}
