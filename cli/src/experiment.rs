//! The routine every subcommand runs, in the order that makes mistakes cheap. The subcommand has
//! checked its arguments and output paths and planned its request with the tuning in force;
//! [`run`] then checks the host memory the run needs, opens the GPU, checks its memory, and only
//! then makes or reads the input, uploads it, warms up, times, checks the result against the
//! CPU, times the copy yardstick and prints. One GPU or the ranks of a group ([`Target`]) alike.

use crate::args::Global;
use crate::memory;
use crate::out::outln;
use gpu_scan::cudarc::driver::sys::CUevent_flags;
use gpu_scan::cudarc::driver::{CudaSlice, CudaStream};
use gpu_scan::{Element, Error, Gpu, Result};
use std::sync::Arc;

/// What a run needs, known before anything is allocated.
#[derive(Clone, Debug)]
pub struct Needs {
    /// The run, as its errors name it (`scan of 1000 u32`).
    pub what: String,
    /// Host bytes: the input, the results read back and the CPU reference.
    pub host: u64,
    /// Device bytes: buffers and temporary storage, over every device the run uses.
    pub device: u64,
}

/// Where an experiment runs: one GPU, or the ranks of a group.
pub trait Target {
    /// Fails with the bytes needed and free unless `bytes` (all the run's device memory) fit.
    fn check_memory(&self, what: &str, bytes: u64) -> Result<()>;
    /// Milliseconds of the work `run` enqueues (the slowest stream's, for several).
    fn time_ms(&self, run: &mut dyn FnMut() -> Result<()>) -> Result<f64>;
    /// Median milliseconds over `iters` runs of a device copy of `bytes` bytes, split as the
    /// target splits its data.
    fn copy_ms(&self, bytes: u64, iters: u32) -> Result<f64>;
}

impl Target for Gpu {
    fn check_memory(&self, what: &str, bytes: u64) -> Result<()> {
        Gpu::check_memory(self, what, bytes)
    }

    fn time_ms(&self, run: &mut dyn FnMut() -> Result<()>) -> Result<f64> {
        Ok(Gpu::time_ms(self, self.stream(), run)? as f64)
    }

    fn copy_ms(&self, bytes: u64, iters: u32) -> Result<f64> {
        copy_ms_on(self, &[(self, self.stream(), bytes)], iters)
    }
}

/// The ranks of a group: each rank's GPU and stream, in rank order.
pub struct Ranks(pub Vec<(Arc<Gpu>, Arc<CudaStream>)>);

impl Ranks {
    /// The ranks of `group`.
    pub fn of(group: &gpu_scan::multi::Group) -> Ranks {
        Ranks(group.members().iter().map(|m| (m.gpu.clone(), m.stream.clone())).collect())
    }

    /// Rank `r`'s part of `total` split evenly over the ranks, as the shards are split.
    pub fn share(&self, total: u64, r: usize) -> u64 {
        share(total, r, self.0.len())
    }
}

/// Rank `r`'s part of `total` split evenly over `p` ranks: `total * r / p .. total * (r + 1) / p`.
pub fn share(total: u64, r: usize, p: usize) -> u64 {
    let (t, r, p) = (total as u128, r as u128, p as u128);
    (t * (r + 1) / p - t * r / p) as u64
}

impl Target for Ranks {
    fn check_memory(&self, what: &str, bytes: u64) -> Result<()> {
        // Ranks on one device (simulated ranks) need their shares together.
        let mut by_device: Vec<(&Gpu, u64)> = Vec::new();
        for (r, (gpu, _)) in self.0.iter().enumerate() {
            let part = self.share(bytes, r);
            match by_device.iter_mut().find(|(g, _)| std::ptr::eq(*g, &**gpu)) {
                Some((_, b)) => *b += part,
                None => by_device.push((gpu, part)),
            }
        }
        by_device.into_iter().try_for_each(|(gpu, b)| gpu.check_memory(what, b))
    }

    fn time_ms(&self, run: &mut dyn FnMut() -> Result<()>) -> Result<f64> {
        let events = self
            .0
            .iter()
            .map(|(_, stream)| {
                // Timing events (cudarc's default events record no time).
                let timed = || stream.context().new_event(Some(CUevent_flags::CU_EVENT_DEFAULT));
                let (start, end) = (timed()?, timed()?);
                start.record(stream)?;
                Ok((start, end))
            })
            .collect::<Result<Vec<_>>>()?;
        run()?;
        let mut slowest = 0f32;
        for ((_, stream), (start, end)) in self.0.iter().zip(&events) {
            end.record(stream)?;
            end.synchronize()?;
            slowest = slowest.max(start.elapsed_ms(end)?);
        }
        Ok(slowest as f64)
    }

    fn copy_ms(&self, bytes: u64, iters: u32) -> Result<f64> {
        let parts: Vec<_> = self.0.iter().enumerate().map(|(r, (g, s))| (&**g, s, self.share(bytes, r))).collect();
        copy_ms_on(self, &parts, iters)
    }
}

/// Median milliseconds on `on` of copies of `bytes` bytes between fresh buffers, one on each
/// (GPU, stream, bytes) of `parts`, all enqueued together.
fn copy_ms_on<D: Target + ?Sized>(on: &D, parts: &[(&Gpu, &Arc<CudaStream>, u64)], iters: u32) -> Result<f64> {
    let mut buffers = Vec::with_capacity(parts.len());
    for &(gpu, stream, bytes) in parts {
        let len = usize::try_from(bytes.max(1)).map_err(|_| Error::invalid("the copy does not fit this machine"))?;
        let a = gpu.alloc_zeros::<u8>(stream, "copy yardstick", len)?;
        let b = gpu.alloc_zeros::<u8>(stream, "copy yardstick", len)?;
        buffers.push((stream, a, b));
    }
    let copy = || -> Result<()> {
        for (stream, a, b) in buffers.iter_mut() {
            stream.memcpy_dtod(a, b)?;
        }
        Ok(())
    };
    Ok(time(on, iters, || Ok(()), copy)?.0)
}

/// One operation to run, check and time on a target (one GPU unless said otherwise).
pub trait Experiment<D: ?Sized = Gpu> {
    /// What runs, printed under the device line.
    fn title(&self) -> String;
    /// Bytes one run reads and writes (for GB/s), and bytes the copy yardstick moves (the
    /// input's, read and written once).
    fn traffic(&self) -> (u64, u64);
    /// Uploads the input and allocates the outputs.
    fn prepare(&mut self, on: &D) -> Result<()>;
    /// Untimed work before each run (restoring an input that a run changes).
    fn reset(&mut self, _on: &D) -> Result<()> {
        Ok(())
    }
    /// One run, enqueued on the target's streams.
    fn run(&mut self, on: &D) -> Result<()>;
    /// The last run's result against the CPU.
    fn check(&mut self, on: &D) -> Result<Check>;
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
        // SAFETY: `--ptx` is for kernel development: whoever passes it vouches that the module was
        // built by `cargo xtask build-ptx` from this checkout's gpu/ and abi/ sources.
        gpu = unsafe { gpu.with_ptx(&ptx) }?;
    }
    let info = gpu.info();
    outln!(
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
pub fn time<D: Target + ?Sized>(
    on: &D,
    iters: u32,
    mut reset: impl FnMut() -> Result<()>,
    mut run: impl FnMut() -> Result<()>,
) -> Result<(f64, f64)> {
    reset()?;
    run()?;
    let mut t = Vec::with_capacity(iters as usize);
    for _ in 0..iters.max(1) {
        reset()?;
        t.push(on.time_ms(&mut run)?);
    }
    Ok(median(&mut t))
}

/// (median, minimum) of `t` (not empty).
pub fn median(t: &mut [f64]) -> (f64, f64) {
    t.sort_by(f64::total_cmp);
    (t[t.len() / 2], t[0])
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

/// An experiment that ran, and whether its check passed.
pub struct Ran<E> {
    pub passed: bool,
    pub exp: E,
}

/// Runs the experiment `make` builds on the GPU `global` names, timing `iters` runs: the host
/// memory `needs` names is checked first, then the GPU opened and its memory checked, and only
/// then is `make` called to make the input.
pub fn run<E: Experiment>(
    global: &Global,
    iters: u32,
    needs: &Needs,
    make: impl FnOnce() -> Result<E>,
) -> Result<Ran<E>> {
    memory::check(&needs.what, needs.host)?;
    let gpu = open(global)?;
    measure(&gpu, global, iters, needs, make)
}

/// The experiment `make` builds, run on `on` (already open) once the device memory `needs`
/// names is checked: prepared, warmed up, timed, checked and compared with a same-run copy of
/// its input; the record appended where `--record` asks.
pub fn measure<D: Target + ?Sized, E: Experiment<D>>(
    on: &D,
    global: &Global,
    iters: u32,
    needs: &Needs,
    make: impl FnOnce() -> Result<E>,
) -> Result<Ran<E>> {
    on.check_memory(&needs.what, needs.device)?;
    let mut exp = make()?;
    outln!("{}", exp.title());
    exp.prepare(on)?;
    let exp = std::cell::RefCell::new(exp);
    let (ms, min_ms) = time(on, iters, || exp.borrow_mut().reset(on), || exp.borrow_mut().run(on))?;
    let mut exp = exp.into_inner();
    let check = exp.check(on)?;
    let (moved, copied) = exp.traffic();
    let cub = exp.cub_ms().map(|c| format!("; CUB {c:.4} ms, ours {:.2}x its speed", c / ms)).unwrap_or_default();
    let (copy, yardstick) = match on.copy_ms(copied, iters) {
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
    outln!("time: {ms:.4} ms (median of {iters}, min {min_ms:.4}), {:.1} GB/s{yardstick}{cub}", gbps(moved, ms));
    let reading = crate::io::reading_seconds();
    if reading > 0.0 {
        outln!("files: read in {reading:.2} s");
    }
    for note in &check.notes {
        outln!("{note}");
    }
    let passed = verdict(&check);
    if let Some(path) = &global.record {
        let record = Record { title: exp.title(), ms, min_ms, moved, copy_ms: copy, cub_ms: exp.cub_ms(), passed };
        record.append(path)?;
    }
    Ok(Ran { passed, exp })
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
        let records: Vec<Record> = r.deserialize().map(|x| x.map_err(|e| bad(&e))).collect::<Result<_>>()?;
        if records.is_empty() {
            return Err(bad(&"holds no records"));
        }
        Ok(records)
    }
}

/// Prints the check line; true when nothing is wrong.
pub fn verdict(check: &Check) -> bool {
    match &check.wrong {
        None => outln!("check: {} against the CPU reference: PASS", check.what),
        Some(w) => outln!("check: {}: {w}: FAIL", check.what),
    }
    check.wrong.is_none()
}

/// The first index where `got` and `want` differ, described.
pub fn first_difference<T: PartialEq + std::fmt::Display>(got: &[T], want: &[T]) -> Option<String> {
    first_difference_by(got, want, |g, w| g == w)
}

/// [`first_difference`] of elements that must be copied bit for bit (kept or sorted elements): a
/// NaN equals the same NaN, and `-0.0` differs from `0.0`.
pub fn first_difference_bits<T: Element>(got: &[T], want: &[T]) -> Option<String> {
    first_difference_by(got, want, |g, w| g.to_bits() == w.to_bits())
}

fn first_difference_by<T: std::fmt::Display>(got: &[T], want: &[T], same: impl Fn(&T, &T) -> bool) -> Option<String> {
    if got.len() != want.len() {
        return Some(format!("{} elements, expected {}", got.len(), want.len()));
    }
    let i = got.iter().zip(want).position(|(g, w)| !same(g, w))?;
    Some(format!("first difference at {i}: expected {}, got {}", want[i], got[i]))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Kept and sorted elements are copies: a NaN matches itself, and the sign of zero counts.
    #[test]
    fn copied_elements_compare_by_their_bits() {
        assert_eq!(first_difference_bits(&[1.0f32, f32::NAN], &[1.0, f32::NAN]), None);
        assert!(first_difference_bits(&[-0.0f64], &[0.0]).is_some());
        assert!(first_difference(&[f32::NAN], &[f32::NAN]).is_some(), "plain comparison would fail a NaN");
    }
}
