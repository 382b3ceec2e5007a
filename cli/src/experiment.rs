//! The routine every subcommand runs: open the GPU (with the tuning asked for), make or read the
//! input, warm up, time, check against the CPU, time the copy yardstick, print.

use crate::args::Global;
use gpu_scan::cudarc::driver::CudaSlice;
use gpu_scan::{Error, Gpu, Result};

/// One operation to run, check and time.
pub trait Experiment {
    /// What runs, printed under the device line.
    fn title(&self) -> String;
    /// Device bytes the experiment allocates, checked before it does.
    fn device_bytes(&self) -> u64;
    /// Bytes one run reads and writes (for GB/s), and bytes the copy yardstick moves (the
    /// input's, read and written once).
    fn traffic(&self) -> (u64, u64);
    /// Uploads the input and allocates the outputs.
    fn prepare(&mut self, gpu: &Gpu) -> Result<()>;
    /// Untimed work before each run (restoring an input that a run changes).
    fn reset(&mut self, _gpu: &Gpu) -> Result<()> {
        Ok(())
    }
    /// One run, enqueued on the GPU's stream.
    fn run(&mut self, gpu: &Gpu) -> Result<()>;
    /// The last run's result against the CPU.
    fn check(&mut self, gpu: &Gpu) -> Result<Check>;
    /// CUB's milliseconds for the same work, from a same-run baseline, when known.
    fn cub_ms(&self) -> Option<f64> {
        None
    }
}

/// A check's outcome: what was checked, what is wrong (nothing when right), and lines to print
/// before the verdict.
#[derive(Debug, Default)]
pub struct Check {
    pub what: String,
    pub wrong: Option<String>,
    pub notes: Vec<String>,
}

impl Check {
    pub fn new(what: impl Into<String>, wrong: Option<String>) -> Check {
        Check { what: what.into(), wrong, notes: Vec::new() }
    }
}

/// Opens the GPU `global` names with the tuning and kernels it asks for, and prints the device.
pub fn open(global: &Global) -> Result<Gpu> {
    let (tuning, ptx) = global.resolve()?;
    let mut gpu = Gpu::new(global.device)?.with_tuning(tuning)?;
    if let Some(ptx) = ptx {
        gpu = gpu.with_ptx(&ptx)?;
    }
    let info = gpu.info();
    println!(
        "device: {} ({} SMs, compute {}.{}, {:.0} GiB)",
        info.name,
        info.multiprocessors,
        info.compute_capability.0,
        info.compute_capability.1,
        info.total_memory as f64 / (1u64 << 30) as f64
    );
    Ok(gpu)
}

/// (median, minimum) milliseconds of `iters` runs of `run`, each after `reset`, after one
/// untimed warm-up.
pub fn time(
    gpu: &Gpu,
    iters: u32,
    mut reset: impl FnMut() -> Result<()>,
    mut run: impl FnMut() -> Result<()>,
) -> Result<(f64, f64)> {
    let stream = gpu.stream().clone();
    reset()?;
    run()?;
    let mut t = Vec::with_capacity(iters as usize);
    for _ in 0..iters.max(1) {
        reset()?;
        t.push(gpu.time_ms(&stream, &mut run)? as f64);
    }
    Ok(median(&mut t))
}

/// (median, minimum) of `t` (not empty).
pub fn median(t: &mut [f64]) -> (f64, f64) {
    t.sort_by(f64::total_cmp);
    (t[t.len() / 2], t[0])
}

/// Median milliseconds of a device copy of `bytes` bytes between fresh buffers.
pub fn copy_ms(gpu: &Gpu, bytes: u64, iters: u32) -> Result<f64> {
    let stream = gpu.stream().clone();
    let len = usize::try_from(bytes.max(1)).map_err(|_| Error::invalid("the copy does not fit this machine"))?;
    let a = gpu.alloc_zeros::<u8>(&stream, "copy yardstick", len)?;
    let mut b = gpu.alloc_zeros::<u8>(&stream, "copy yardstick", len)?;
    Ok(time(gpu, iters, || Ok(()), || Ok(stream.memcpy_dtod(&a, &mut b)?))?.0)
}

/// A device copy of `data` and an output as long, for experiments that read and write every
/// element once.
pub fn in_and_out<T: gpu_scan::Element>(gpu: &Gpu, data: &[T]) -> Result<(CudaSlice<T>, CudaSlice<T>)> {
    let stream = gpu.stream().clone();
    Ok((gpu.upload(&stream, "input", data)?, gpu.alloc_zeros::<T>(&stream, "output", data.len())?))
}

/// (bytes moved, bytes of the input) of reading and writing `n` elements of `T` once.
pub fn read_write_once<T: gpu_scan::Element>(n: usize) -> (u64, u64) {
    let bytes = (n * T::TYPE.size()) as u64;
    (2 * bytes, bytes)
}

/// GB/s of `bytes` moved in `ms`.
pub fn gbps(bytes: u64, ms: f64) -> f64 {
    bytes as f64 / (ms * 1e-3) / 1e9
}

/// Runs `exp` on a GPU opened as `global` says, timing `iters` runs: true when its check passed.
pub fn run(global: &Global, iters: u32, exp: &mut dyn Experiment) -> Result<bool> {
    let gpu = open(global)?;
    println!("{}", exp.title());
    gpu.check_memory("the experiment's buffers", exp.device_bytes())?;
    exp.prepare(&gpu)?;
    let exp = std::cell::RefCell::new(exp);
    let (ms, min_ms) = time(&gpu, iters, || exp.borrow_mut().reset(&gpu), || exp.borrow_mut().run(&gpu))?;
    let exp = exp.into_inner();
    let check = exp.check(&gpu)?;
    let (moved, copied) = exp.traffic();
    let cub = exp.cub_ms().map(|c| format!("; CUB {c:.4} ms, ours {:.2}x its speed", c / ms)).unwrap_or_default();
    let (copy, yardstick) = match copy_ms(&gpu, copied, iters) {
        Ok(copy) => (
            Some(copy),
            format!(
                ", {:.1}% of a same-run device copy of the input ({copy:.4} ms, {:.1} GB/s)",
                100.0 * copy / ms,
                gbps(2 * copied, copy)
            ),
        ),
        Err(e @ Error::OutOfMemory { .. }) => (None, format!(" (no copy yardstick: {e})")),
        Err(e) => return Err(e),
    };
    println!("time: {ms:.4} ms (median of {iters}, min {min_ms:.4}), {:.1} GB/s{yardstick}{cub}", gbps(moved, ms));
    for note in &check.notes {
        println!("{note}");
    }
    let passed = verdict(&check);
    if let Some(path) = &global.record {
        let record = Record { title: exp.title(), ms, min_ms, moved, copy_ms: copy, cub_ms: exp.cub_ms(), passed };
        record.append(path)?;
    }
    Ok(passed)
}

/// One run's timing, as `--record` appends it and `report` reads it.
#[derive(Clone, Debug, serde::Serialize, serde::Deserialize)]
pub struct Record {
    pub title: String,
    pub ms: f64,
    pub min_ms: f64,
    /// Bytes the run read and wrote.
    pub moved: u64,
    /// The same-run device copy of the input.
    pub copy_ms: Option<f64>,
    pub cub_ms: Option<f64>,
    pub passed: bool,
}

impl Record {
    /// Appends this record to the CSV at `path` (with a header when the file is new).
    fn append(&self, path: &std::path::Path) -> Result<()> {
        let bad = |e: &dyn std::fmt::Display| Error::invalid(format!("--record {}: {e}", path.display()));
        let fresh = !path.exists();
        let file = std::fs::OpenOptions::new().create(true).append(true).open(path).map_err(|e| bad(&e))?;
        let mut w = csv::WriterBuilder::new().has_headers(fresh).from_writer(file);
        w.serialize(self).map_err(|e| bad(&e))?;
        w.flush().map_err(|e| bad(&e))
    }

    /// The records in the CSV at `path`.
    pub fn read(path: &std::path::Path) -> Result<Vec<Record>> {
        let bad = |e: &dyn std::fmt::Display| Error::invalid(format!("{}: {e}", path.display()));
        let mut r = csv::Reader::from_path(path).map_err(|e| bad(&e))?;
        r.deserialize().map(|x| x.map_err(|e| bad(&e))).collect()
    }
}

/// Prints the check line; true when nothing is wrong.
pub fn verdict(check: &Check) -> bool {
    match &check.wrong {
        None => println!("check: {} against the CPU reference: PASS", check.what),
        Some(w) => println!("check: {}: {w}: FAIL", check.what),
    }
    check.wrong.is_none()
}

/// The first index where `got` and `want` differ, described.
pub fn first_difference<T: PartialEq + std::fmt::Display>(got: &[T], want: &[T]) -> Option<String> {
    if got.len() != want.len() {
        return Some(format!("{} elements, expected {}", got.len(), want.len()));
    }
    let i = got.iter().zip(want).position(|(g, w)| g != w)?;
    Some(format!("first difference at {i}: expected {}, got {}", want[i], got[i]))
}
