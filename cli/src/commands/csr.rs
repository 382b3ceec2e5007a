//! `csr`: COO -> CSR row offsets of a file's sorted row indices or a generated sparse matrix with
//! empty rows, and back to COO; or (`--to-coo`) a file's row offsets to row indices.

use crate::args::{count_in, host_len, positive, Files, Global, Runs};
use crate::experiment::{self, first_difference, Check, Experiment, Needs};
use crate::io;
use crate::memory::{self, bytes_of, total};
use clap::Args;
use gpu_scan::cudarc::driver::CudaSlice;
use gpu_scan::plan::partition::count_scan;
use gpu_scan::reference::apps as reference;
use gpu_scan::{input, CsrOptions, ElemType, Error, Gpu, Result, TempStorage};
use std::path::Path;

#[derive(Args)]
pub struct CsrArgs {
    /// Number of nonzeros (fewer than 2^32 - 1: the offsets are 32-bit; optional with --input).
    #[arg(value_parser = positive)]
    nnz: Option<u64>,
    /// Number of rows, 1 to 2^32 - 2 (needed with --input; generated: default nnz / 4, about 2%
    /// of rows left empty on purpose).
    #[arg(long, value_parser = count_in::<u32>(1, u32::MAX as u64 - 1), conflicts_with = "to_coo")]
    rows: Option<u32>,
    /// The other way: --input holds CSR row offsets (u32, non-decreasing from 0, one more than
    /// the rows), --output gets the row index of every nonzero.
    #[arg(long, requires = "input")]
    to_coo: bool,
    /// --input: sorted u32 row indices (or, with --to-coo, row offsets); --output: the R + 1
    /// row offsets (or, with --to-coo, the row indices).
    #[command(flatten)]
    files: Files,
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

/// An error unless `rows` (of the file `path`) are sorted row indices below `nrows`.
fn check_rows(path: &Path, rows: &[u32], nrows: u32) -> Result<()> {
    if let Some(i) = rows.iter().position(|&r| r >= nrows) {
        return Err(Error::invalid(format!(
            "{}: row index {} at position {i} is not below --rows {nrows}",
            path.display(),
            rows[i]
        )));
    }
    if let Some(i) = rows.windows(2).position(|w| w[0] > w[1]) {
        return Err(Error::invalid(format!(
            "{}: row indices are not sorted: {} at position {} follows {}; sort them (numpy: np.sort)",
            path.display(),
            rows[i + 1],
            i + 1,
            rows[i]
        )));
    }
    Ok(())
}

/// An error unless `offsets` (of the file `path`) are CSR row offsets: at least one, the first
/// 0, non-decreasing.
fn check_offsets(path: &Path, offsets: &[u32]) -> Result<()> {
    let bad = |what: String| Error::invalid(format!("{}: {what}", path.display()));
    match offsets.first() {
        None => return Err(bad("holds no offsets; the row offsets of R rows are R + 1 values from 0".into())),
        Some(&first) if first != 0 => return Err(bad(format!("row offsets start at {first}, not 0"))),
        _ => {}
    }
    if let Some(i) = offsets.windows(2).position(|w| w[0] > w[1]) {
        return Err(bad(format!(
            "row offsets decrease: {} at position {} follows {}",
            offsets[i + 1],
            i + 1,
            offsets[i]
        )));
    }
    Ok(())
}

pub fn run(args: &CsrArgs, global: &Global) -> Result<bool> {
    let (tuning, _) = global.resolve()?;
    // Row indices and offsets are u32: a raw file is read as u32.
    if let Some(path) = &args.files.input {
        io::side_type(path, "csr", &[ElemType::U32])?;
    }
    args.files.out.check(&[])?;
    if args.to_coo {
        return to_coo(args, global, &tuning);
    }
    let count = args.files.len(ElemType::U32, args.nnz)?;
    let nnz = host_len(count, "NNZ")?;
    if count >= u32::MAX as u64 {
        return Err(Error::invalid(format!("{nnz} nonzeros: 32-bit offsets hold fewer than 2^32")));
    }
    let nrows = match (args.rows, &args.files.input) {
        (Some(r), _) => r,
        (None, Some(_)) => return Err(Error::invalid("--input needs --rows R, the number of rows")),
        (None, None) => (count / 4).clamp(1, u32::MAX as u64 - 1) as u32,
    };
    let entries = nrows as u64 + 1;
    let to_csr = count_scan(&tuning, entries, true)?.temp_bytes();
    let to_coo = count_scan(&tuning, count, false)?.temp_bytes();
    let what = format!("a COO -> CSR of {nnz} nonzeros in {nrows} rows");
    let (indices, offsets) = (bytes_of(count, 4, &what)?, bytes_of(entries, 4, &what)?);
    // The row indices, the offsets read back and the CPU's, the round trip read back.
    let needs = Needs {
        host: total(&[indices, offsets, offsets, indices], &what)?,
        device: total(&[indices, 2 * offsets, to_csr.0, to_csr.1, 2 * indices, to_coo.0, to_coo.1], &what)?,
        what,
    };
    // A file is read and checked before the GPU opens; generated rows are made after.
    let given = match &args.files.input {
        Some(path) => {
            memory::check(&needs.what, needs.host)?;
            let rows = io::read::<u32>(path)?;
            check_rows(path, &rows, nrows)?;
            Some(rows)
        }
        None => None,
    };
    let make = || {
        let rows = match given {
            Some(rows) => rows,
            None => sparse_rows(args.runs.seed, nnz, nrows)?,
        };
        Ok(Csr { rows, nrows, buffers: None, temp: TempStorage::new(), got: Vec::new() })
    };
    let ran = experiment::run(global, args.runs.iters, &needs, make)?;
    write(args, ran.passed, &ran.exp.got)?;
    Ok(ran.passed)
}

/// `--output`, once the run passed.
fn write(args: &CsrArgs, passed: bool, got: &[u32]) -> Result<()> {
    let force = args.files.out.force;
    let outputs =
        args.files.out.output.iter().map(|p| (p.as_path(), Box::new(move |p: &Path| io::write(p, got, force)) as _));
    io::write_outputs(passed, outputs.collect())
}

/// `--to-coo`: the row indices of a file's row offsets.
fn to_coo(args: &CsrArgs, global: &Global, tuning: &gpu_scan::Tuning) -> Result<bool> {
    let path = args.files.input.as_deref().expect("--to-coo requires --input");
    let entries = io::input_len(path, ElemType::U32)?;
    let what = format!("a CSR -> COO of {} rows", entries.saturating_sub(1));
    let offsets_bytes = bytes_of(entries, 4, &what)?;
    // The offsets, then (once their last entry is known) the row indices read back and the CPU's.
    memory::check(&what, offsets_bytes)?;
    let offsets = io::read::<u32>(path)?;
    check_offsets(path, &offsets)?;
    let nnz = *offsets.last().expect("checked") as u64;
    if let Some(n) = args.nnz.filter(|&n| n != nnz) {
        return Err(Error::invalid(format!("NNZ is {n} but the offsets of {} end at {nnz}", path.display())));
    }
    let (state, scratch) = count_scan(tuning, nnz, false)?.temp_bytes();
    let indices = bytes_of(nnz, 4, &what)?;
    let needs = Needs {
        host: total(&[offsets_bytes, indices, indices], &what)?,
        device: total(&[offsets_bytes, indices, state, scratch], &what)?,
        what,
    };
    let make = || Ok(CsrToCoo { offsets, buffers: None, temp: TempStorage::new(), got: Vec::new() });
    let ran = experiment::run(global, args.runs.iters, &needs, make)?;
    write(args, ran.passed, &ran.exp.got)?;
    Ok(ran.passed)
}

/// The row index of every nonzero of CSR row offsets, on the CPU.
fn coo_rows(offsets: &[u32]) -> Vec<u32> {
    offsets.windows(2).enumerate().flat_map(|(r, w)| std::iter::repeat_n(r as u32, (w[1] - w[0]) as usize)).collect()
}

struct CsrToCoo {
    offsets: Vec<u32>,
    /// The offsets and the row indices.
    buffers: Option<(CudaSlice<u32>, CudaSlice<u32>)>,
    temp: TempStorage,
    /// The row indices the last check read back.
    got: Vec<u32>,
}

impl Experiment for CsrToCoo {
    fn title(&self) -> String {
        let nnz = self.offsets.last().copied().unwrap_or(0);
        format!("csr --to-coo: {} rows, {nnz} nonzeros", self.offsets.len() - 1)
    }

    fn traffic(&self) -> (u64, u64) {
        let nnz = self.offsets.last().copied().unwrap_or(0) as u64;
        (4 * (self.offsets.len() as u64 + nnz), 4 * nnz)
    }

    fn prepare(&mut self, gpu: &Gpu) -> Result<()> {
        let nnz = self.offsets.last().copied().unwrap_or(0) as usize;
        let d_offsets = gpu.upload(gpu.stream(), "row offsets", &self.offsets)?;
        let d_rows = gpu.alloc_zeros::<u32>(gpu.stream(), "row indices", nnz)?;
        self.buffers = Some((d_offsets, d_rows));
        Ok(())
    }

    fn run(&mut self, gpu: &Gpu) -> Result<()> {
        let (offsets, rows) = self.buffers.as_mut().expect("prepared");
        gpu.csr_to_coo(gpu.stream(), offsets, rows, &CsrOptions::new(), &mut self.temp)
    }

    fn check(&mut self, gpu: &Gpu) -> Result<Check> {
        let (_, rows) = self.buffers.as_ref().expect("prepared");
        self.got = gpu.download(gpu.stream(), rows)?;
        let wrong = first_difference(&self.got, &coo_rows(&self.offsets));
        Ok(Check::new(format!("{} row indices", self.got.len()), wrong))
    }
}

struct Csr {
    rows: Vec<u32>,
    nrows: u32,
    /// Row indices and the last run's offsets.
    buffers: Option<(CudaSlice<u32>, Option<CudaSlice<u32>>)>,
    temp: TempStorage,
    /// The offsets the last check read back.
    got: Vec<u32>,
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
        self.got.clone_from(&got);
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

#[cfg(test)]
mod tests {
    use super::coo_rows;

    #[test]
    fn offsets_expand_to_the_row_of_every_nonzero() {
        assert_eq!(coo_rows(&[0, 2, 2, 3]), [0, 0, 2]);
        assert_eq!(coo_rows(&[0]), [] as [u32; 0]);
    }
}
