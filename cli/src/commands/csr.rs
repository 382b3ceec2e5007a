//! `csr`: COO -> CSR row offsets of a generated sparse matrix with empty rows, and back to COO.

use crate::args::{count_in, host_len, positive, Global, Runs};
use crate::experiment::{self, first_difference, Check, Experiment, Needs};
use crate::memory::{self, bytes_of, total};
use clap::Args;
use gpu_scan::cudarc::driver::CudaSlice;
use gpu_scan::plan::partition::count_scan;
use gpu_scan::reference::apps as reference;
use gpu_scan::{input, CsrOptions, Error, Gpu, Result, TempStorage};

#[derive(Args)]
pub struct CsrArgs {
    /// Number of nonzeros (fewer than 2^32 - 1: the offsets are 32-bit).
    #[arg(value_parser = positive)]
    nnz: u64,
    /// Number of rows, 1 to 2^32 - 2 (default nnz / 4; about 2% of rows are left empty on purpose).
    #[arg(long, value_parser = count_in::<u32>(1, u32::MAX as u64 - 1))]
    rows: Option<u32>,
    #[command(flatten)]
    runs: Runs,
}

/// A sorted COO row index array over `nrows` rows with about 2% of the rows empty.
fn sparse_rows(seed: u64, nnz: usize, nrows: u32) -> Result<Vec<u32>> {
    let mut rows = memory::from_fn(nnz, "the row indices", |i| {
        let r = (input::bits(seed, i as u64) % nrows as u64) as u32;
        if r % 50 == 7 {
            (r + 1) % nrows
        } else {
            r
        }
    })?;
    rows.sort_unstable();
    Ok(rows)
}

pub fn run(args: &CsrArgs, global: &Global) -> Result<bool> {
    let (tuning, _) = global.resolve()?;
    let nnz = host_len(args.nnz, "NNZ")?;
    if args.nnz >= u32::MAX as u64 {
        return Err(Error::invalid(format!("{nnz} nonzeros: 32-bit offsets hold fewer than 2^32")));
    }
    let nrows = args.rows.unwrap_or((args.nnz / 4).clamp(1, u32::MAX as u64 - 1) as u32);
    let entries = nrows as u64 + 1;
    let to_csr = count_scan(&tuning, entries, true)?.temp_bytes();
    let to_coo = count_scan(&tuning, args.nnz, false)?.temp_bytes();
    let what = format!("a COO -> CSR of {nnz} nonzeros in {nrows} rows");
    let (indices, offsets) = (bytes_of(args.nnz, 4, &what)?, bytes_of(entries, 4, &what)?);
    // The row indices, the offsets read back and the CPU's, the round trip read back.
    let needs = Needs {
        host: total(&[indices, offsets, offsets, indices], &what)?,
        device: total(&[indices, 2 * offsets, to_csr.0, to_csr.1, 2 * indices, to_coo.0, to_coo.1], &what)?,
        what,
    };
    let make =
        || Ok(Csr { rows: sparse_rows(args.runs.seed, nnz, nrows)?, nrows, buffers: None, temp: TempStorage::new() });
    Ok(experiment::run(global, args.runs.iters, &needs, make)?.passed)
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
