//! `scan --input FILE --output FILE`: the streamed scan, file to file, whatever the sizes of the
//! file, the host's memory and the device's. The input is read a chunk at a time into pinned
//! staging buffers, the results are written a chunk at a time to the temporary file that becomes
//! the output once complete, and each chunk is checked against the CPU as it arrives (from the
//! chunk before it), so the host holds only the chunks in flight. An error or a failed check
//! stops the stream and leaves no output file.

use crate::args::Global;
use crate::experiment;
use crate::io::{self, as_bytes, as_bytes_mut, FileElement, Format};
use crate::out::outln;
use gpu_scan::cudarc::driver::result::{memcpy_dtoh_async, memcpy_htod_async};
use gpu_scan::cudarc::driver::DevicePtrMut;
use gpu_scan::reference::{self, verify};
use gpu_scan::{
    Algorithm, ChunkSink, ChunkSource, Error, Gpu, Progress, Result, ScanOptions, StreamOptions, TempStorage,
};
use npyz::WriterBuilder;
use rayon::prelude::*;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::time::{Duration, Instant};

/// A file-to-file scan.
pub struct FileScan<'a> {
    pub input: &'a Path,
    pub output: &'a Path,
    pub force: bool,
    pub device_memory: Option<u64>,
    pub check: bool,
}

/// Where the elements of `path` start: after a `.npy` header, or at 0.
fn data_offset(path: &Path) -> Result<u64> {
    let len = io::file_len(path)?;
    Ok(match Format::of(path) {
        Format::Npy => len - io::npy_data_bytes(path, len)?,
        Format::Raw => 0,
    })
}

/// The elements of an input file from `offset`, read in order; a file shorter than its header
/// promised (truncated under us) is an error naming it.
struct FileSource<'a> {
    path: &'a Path,
    file: File,
    offset: u64,
    n: u64,
    busy: Duration,
}

impl<T: FileElement> ChunkSource<T> for FileSource<'_> {
    fn elements(&self) -> u64 {
        self.n
    }
    fn read(&mut self, start: u64, into: &mut [T]) -> Result<()> {
        let t = Instant::now();
        let at = self.offset + start * size_of::<T>() as u64;
        let r = self.file.seek(SeekFrom::Start(at)).and_then(|_| self.file.read_exact(as_bytes_mut(into)));
        self.busy += t.elapsed();
        r.map_err(|e| Error::Io { what: format!("{}: reading at byte {at}", self.path.display()), source: e })
    }
}

/// Checks each chunk of results against the CPU scan of its input from the carry of the chunk
/// before it (as the GPU left it), so a wrong chunk fails its own check: integers bit for bit,
/// floats within the worst-case bound (a user's file may round one way throughout).
struct Checker<'a, T> {
    opts: ScanOptions<T>,
    input: FileSource<'a>,
    last: Option<(T, T)>,
    busy: Duration,
}

impl<T: FileElement> Checker<'_, T> {
    fn check(&mut self, start: u64, got: &[T]) -> Result<Option<String>> {
        let mut data = vec![got[0]; got.len()];
        ChunkSource::<T>::read(&mut self.input, start, &mut data)?;
        let t = Instant::now();
        let op = self.opts.op;
        let init = match self.last {
            None => self.opts.init,
            Some((i, o)) if self.opts.exclusive => Some(reference::scan(op, &[o, i], false, None)?[1]),
            Some((_, o)) => Some(o),
        };
        let v = verify::verify_with(
            verify::Tolerance::WorstCase,
            op,
            Algorithm::SinglePass,
            &data,
            self.opts.exclusive,
            init,
            got,
        )?;
        self.last = Some((data[data.len() - 1], got[got.len() - 1]));
        self.busy += t.elapsed();
        Ok((!v.passed()).then(|| match v.first {
            Some(f) => format!(
                "{} wrong, the first at {}: expected {}, got {}",
                v.wrong,
                start + f.index as u64,
                f.expected,
                f.got
            ),
            None => format!("{} wrong", v.wrong),
        }))
    }
}

/// Writes the results to the temporary output file, checking them first.
struct FileSink<'a, T> {
    path: &'a Path,
    file: File,
    checker: Option<Checker<'a, T>>,
    failure: Option<String>,
    busy: Duration,
}

impl<T: FileElement> ChunkSink<T> for FileSink<'_, T> {
    fn write(&mut self, start: u64, from: &[T]) -> Result<()> {
        if let Some(c) = &mut self.checker {
            if let Some(wrong) = c.check(start, from)? {
                self.failure = Some(wrong.clone());
                return Err(Error::invalid(format!("the result failed its check: {wrong}")));
            }
        }
        let t = Instant::now();
        let r = self.file.write_all(as_bytes(from));
        self.busy += t.elapsed();
        r.map_err(|e| Error::Io { what: format!("{}: writing", self.path.display()), source: e })
    }
}

/// Runs the streamed scan `f` with `opts`; `Ok(false)` when a chunk failed its check.
pub fn run<T: FileElement + Send + Sync>(global: &Global, f: &FileScan, opts: ScanOptions<T>) -> Result<bool> {
    if cfg!(target_endian = "big") {
        return Err(Error::invalid("streamed files are read as little-endian, and this machine is big-endian"));
    }
    let n = io::input_len(f.input, T::TYPE)?;
    // The chunks are read as the bytes lie, so they must lie in this machine's order.
    if Format::of(f.input) == Format::Npy {
        io::check_little_endian(f.input, &io::header_of(f.input)?)?;
    }
    let offset = data_offset(f.input)?;
    io::check_writable(f.output, f.force)?;
    let size = size_of::<T>() as u64;
    let gpu = experiment::open(global)?;
    let mut sopts = StreamOptions::new();
    if let Some(bytes) = f.device_memory {
        sopts = sopts.device_memory(bytes);
    }
    let plan = gpu.streamed_plan::<T>(n, true, &opts, &sopts)?;
    let mib = |b: u64| b as f64 / (1u64 << 20) as f64;
    outln!(
        "streamed scan: {n} {} {} {}, {} chunks of {} elements through {} device buffers ({:.0} MiB of device memory, {:.0} MiB pinned)",
        T::TYPE.name(),
        opts.op.name(),
        if opts.exclusive { "exclusive" } else { "inclusive" },
        plan.chunks,
        plan.chunk,
        plan.slots,
        mib(plan.device_bytes),
        mib(plan.staging_bytes(size)),
    );
    let bar = indicatif::ProgressBar::new(n * size);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{bar:40} {decimal_bytes}/{decimal_total_bytes} {decimal_bytes_per_sec} {elapsed_precise}",
        )
        .expect("a valid template"),
    );
    let show = |p: Progress| bar.set_position(p.done * size);
    let sopts = sopts.progress(&show);
    let open = |path: &Path| File::open(path).map_err(|e| io::bad(path, format!("cannot open: {e}")));
    let started = Instant::now();
    let mut figures = None;
    let mut failure = None;
    let written = io::write_file(f.output, f.force, |tmp| {
        let mut out = File::create(tmp).map_err(|e| io::bad(f.output, format!("cannot write: {e}")))?;
        if Format::of(f.output) == Format::Npy {
            npyz::WriteOptions::new_header_only()
                .dtype(<T as npyz::AutoSerialize>::default_dtype())
                .shape(&[n])
                .writer(&mut out)
                .write_header_only()
                .map_err(|e| io::bad(f.output, format!("cannot write: {e}")))?;
        }
        let source = |file| FileSource { path: f.input, file, offset, n, busy: Duration::ZERO };
        let checker = f.check.then(|| open(f.input)).transpose()?.map(|file| Checker {
            opts,
            input: source(file),
            last: None,
            busy: Duration::ZERO,
        });
        let mut input = source(open(f.input)?);
        let mut sink = FileSink { path: f.output, file: out, checker, failure: None, busy: Duration::ZERO };
        let r = stream(&gpu, &mut input, &mut sink, &opts, &sopts);
        failure = sink.failure.take();
        r?;
        let check = sink.checker.as_ref().map_or(Duration::ZERO, |c| c.busy + c.input.busy);
        figures = Some((input.busy, sink.busy, check, Instant::now()));
        Ok(())
    });
    bar.finish_and_clear();
    if let Some(wrong) = failure {
        outln!("FAIL: {wrong}");
        outln!("{} not written: the result failed its check", f.output.display());
        return Ok(false);
    }
    written?;
    let seconds = started.elapsed().as_secs_f64();
    let (read, write, check, streamed) = figures.expect("a written file was streamed");
    let flush = streamed.elapsed();
    let gb = (n * size) as f64 / 1e9;
    outln!(
        "{}: {gb:.2} GB in {seconds:.2} s, {:.2} GB/s of input; host time reading {:.2} s, writing {:.2} s, checking {:.2} s, flushing to disk {:.2} s (the rest waits on the GPU and the bus)",
        if f.check { "PASS" } else { "done (not checked)" },
        gb / seconds,
        read.as_secs_f64(),
        write.as_secs_f64(),
        check.as_secs_f64(),
        flush.as_secs_f64(),
    );
    outln!("wrote {}", f.output.display());
    Ok(true)
}

fn stream<T: FileElement + Send + Sync>(
    gpu: &Gpu,
    source: &mut dyn ChunkSource<T>,
    sink: &mut dyn ChunkSink<T>,
    opts: &ScanOptions<T>,
    sopts: &StreamOptions,
) -> Result<()> {
    let mut temp = TempStorage::new();
    gpu.scan_streamed_from(gpu.stream(), source, sink, opts, sopts, &mut temp).map(drop)
}

/// A streamed scan of host memory.
pub struct HostScan {
    pub n: u64,
    pub seed: u64,
    pub iters: u32,
    /// Pageable memory (a `Vec`) instead of pinned.
    pub pageable: bool,
    pub device_memory: Option<u64>,
    pub check: bool,
}

/// `scan N --stream`: `n` generated elements in pinned (or pageable) host memory, streamed
/// through the device `iters` times after a warm-up: the median time and GB/s, the result checked
/// against the CPU once, and the bus alone over the same memory and chunks as the yardstick.
pub fn run_host<T: FileElement + Send + Sync>(global: &Global, h: &HostScan, opts: ScanOptions<T>) -> Result<bool> {
    let len = crate::args::host_len(h.n, "N")?;
    let size = size_of::<T>() as u64;
    let what = format!("a streamed scan of {} {}", h.n, T::TYPE.name());
    let bytes = crate::memory::bytes_of(h.n, size, &what)?;
    let reference = if h.check { bytes } else { 0 };
    crate::memory::check(&what, crate::memory::total(&[bytes, bytes, reference], &what)?)?;
    let gpu = experiment::open(global)?;
    let mut sopts = StreamOptions::new();
    if let Some(b) = h.device_memory {
        sopts = sopts.device_memory(b);
    }
    let value = |i: usize| gpu_scan::input::value::<T>(opts.op, h.seed, i as u64);
    let (mut pin_in, mut pin_out, page_in, mut page_out);
    let (input, output): (&[T], &mut [T]) = if h.pageable {
        page_in = crate::memory::from_fn(len, "the generated input", value)?;
        page_out = crate::memory::from_fn(len, "the output", |_| T::zero())?;
        (&page_in, &mut page_out)
    } else {
        pin_in = gpu.pinned::<T>(len)?;
        pin_out = gpu.pinned::<T>(len)?;
        let i = pin_in.as_mut_slice()?;
        i.par_iter_mut().enumerate().for_each(|(k, x)| *x = value(k));
        (i, pin_out.as_mut_slice()?)
    };
    let plan = gpu.streamed_plan::<T>(h.n, h.pageable, &opts, &sopts)?;
    let memory = if h.pageable { "pageable" } else { "pinned" };
    outln!(
        "streamed scan from {memory} host memory: {} {} {}, {} chunks of {} elements through {} device buffers ({:.0} MiB)",
        h.n,
        T::TYPE.name(),
        opts.op.name(),
        plan.chunks,
        plan.chunk,
        plan.slots,
        plan.device_bytes as f64 / (1u64 << 20) as f64
    );
    let mut temp = TempStorage::new();
    let ms = timed(h.iters, || gpu.scan_streamed(gpu.stream(), input, output, &opts, &sopts, &mut temp).map(drop))?;
    let gb = (h.n * size) as f64 / 1e9;
    let passed = !h.check || {
        let v = verify::verify_run(gpu.tuning(), &opts, input, output)?.0;
        if !v.passed() {
            outln!("FAIL: {} wrong, the first {:?}", v.wrong, v.first);
        }
        v.passed()
    };
    let rate = |ms: f64| gb / (ms / 1e3);
    outln!(
        "{}: median {ms:.2} ms over {} runs: {:.2} GB/s each way",
        if !h.check {
            "done (not checked)"
        } else if passed {
            "PASS"
        } else {
            "FAIL"
        },
        h.iters,
        rate(ms)
    );
    let [up, down, both] = bus(&gpu, input, output, plan.chunk as usize, plan.slots as usize, h.iters)?;
    let round_trip = up + down;
    outln!(
        "the bus alone over the same {memory} memory and chunks (GB/s each way): H2D {:.2}, D2H {:.2}, both at once {:.2}, one after the other {:.2}",
        rate(up),
        rate(down),
        rate(both),
        rate(round_trip)
    );
    outln!(
        "the streamed scan: {:.1}% of both at once, {:.1}% of one after the other",
        100.0 * both / ms,
        100.0 * round_trip / ms
    );
    match in_device(&gpu, input, output, &opts, h.iters)? {
        Some(t) => outln!(
            "the in-device scan with a copy in before and out after: {:.2} GB/s each way (the streamed scan {:.2}x)",
            rate(t),
            t / ms
        ),
        None => outln!("the in-device scan with copies around it: the input does not fit the device's free memory"),
    }
    Ok(passed)
}

/// The median milliseconds of what a caller does without streaming, where the device holds the
/// input: copy it all in, scan it in place, copy it all out, on one stream.
fn in_device<T: FileElement>(
    gpu: &Gpu,
    input: &[T],
    output: &mut [T],
    opts: &ScanOptions<T>,
    iters: u32,
) -> Result<Option<f64>> {
    let bytes = std::mem::size_of_val(input) as u64;
    // Room for the tile state and the allocator's slack beside the array.
    if gpu.memory()?.0 < bytes + bytes / 16 + (256 << 20) {
        return Ok(None);
    }
    let s = gpu.stream().clone();
    let mut d = gpu.alloc_zeros::<T>(&s, "the in-device copy", input.len())?;
    let at = d.device_ptr_mut(&s).0;
    let mut temp = TempStorage::new();
    timed(iters, || {
        // SAFETY: `d` holds as many elements as `input` and `output`, which outlive the copies;
        // the stream is synchronized before `timed` goes on.
        unsafe { memcpy_htod_async(at, input, s.cu_stream()) }?;
        gpu.scan_in_place(&s, &mut d, opts, &mut temp)?;
        unsafe { memcpy_dtoh_async(output, at, s.cu_stream()) }?;
        Ok(s.synchronize()?)
    })
    .map(Some)
}

/// The median milliseconds of `iters` runs of `f` after a warm-up.
fn timed(iters: u32, mut f: impl FnMut() -> Result<()>) -> Result<f64> {
    let mut times = Vec::with_capacity(iters as usize);
    for i in 0..=iters {
        let t = Instant::now();
        f()?;
        if i > 0 {
            times.push(t.elapsed().as_secs_f64() * 1e3);
        }
    }
    Ok(experiment::median(&mut times).0)
}

/// The bus alone, in the chunks of the stream through as many device buffers: the median
/// milliseconds to upload every chunk of `input`, to download every chunk into `output`, and to
/// do both at once on two streams (the uploads and downloads through separate buffers, so
/// neither waits on the other).
fn bus<T: FileElement>(
    gpu: &Gpu,
    input: &[T],
    output: &mut [T],
    chunk: usize,
    slots: usize,
    iters: u32,
) -> Result<[f64; 3]> {
    let (up, down) = (gpu.new_stream()?, gpu.new_stream()?);
    let mut buffers =
        (0..2 * slots).map(|_| gpu.alloc_zeros::<T>(&up, "a bus buffer", chunk)).collect::<Result<Vec<_>>>()?;
    let dev: Vec<u64> = buffers.iter_mut().map(|b| b.device_ptr_mut(&up).0).collect();
    up.synchronize()?;
    let mut copy = |h2d: bool, d2h: bool| {
        timed(iters, || {
            for (i, start) in (0..input.len()).step_by(chunk).enumerate() {
                let r = start..(start + chunk).min(input.len());
                // SAFETY: every device buffer holds `chunk` elements, at least `r`'s; the host
                // memory outlives the copies, which both streams finish before `timed` goes on.
                if h2d {
                    unsafe { memcpy_htod_async(dev[i % slots], &input[r.clone()], up.cu_stream()) }?;
                }
                if d2h {
                    unsafe { memcpy_dtoh_async(&mut output[r], dev[slots + i % slots], down.cu_stream()) }?;
                }
            }
            up.synchronize()?;
            Ok(down.synchronize()?)
        })
    };
    Ok([copy(true, false)?, copy(false, true)?, copy(true, true)?])
}
