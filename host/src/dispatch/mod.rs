//! Device-wide scans: the public options, the reusable temporary storage, and one driver per
//! strategy. A driver only plans (tiles, levels, temporary bytes) and launches; the kernels do
//! the work.

mod hierarchical;
mod naive;
pub(crate) mod single_pass;
mod trace;

pub use trace::{Trace, TraceStep};

use crate::element::Element;
use crate::error::{Error, Result};
use crate::runtime::Gpu;
use cudarc::driver::{CudaSlice, CudaStream, DevicePtr, DevicePtrMut, DeviceRepr, LaunchConfig, ValidAsZeroBits};
use scan_abi::block::BlockAlgo;
use scan_abi::status::EPOCH_MAX;
use scan_abi::{ElemType, Op};
use std::sync::Arc;

/// How the tile results of the hierarchical strategy are combined.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Propagation {
    /// Reduce every tile, scan the totals, then scan every tile from its offset: the input is
    /// read twice and the output written once (3n element moves).
    #[default]
    ReduceThenScan,
    /// Scan every tile and write its total, scan the totals, then add each tile's offset to its
    /// elements: the lecture's form (4n element moves).
    ScanThenAdd,
}

impl Propagation {
    pub const fn name(self) -> &'static str {
        match self {
            Propagation::ReduceThenScan => "reduce-then-scan",
            Propagation::ScanThenAdd => "scan-then-add",
        }
    }

    pub fn parse(s: &str) -> Option<Propagation> {
        [Propagation::ReduceThenScan, Propagation::ScanThenAdd].into_iter().find(|p| p.name() == s)
    }
}

/// Device-wide strategy.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Algorithm {
    /// One launch, decoupled look-back: the fastest, the default.
    #[default]
    SinglePass,
    /// Tile scans, the tile totals scanned recursively, offsets combined back.
    Hierarchical { block: BlockAlgo, propagation: Propagation },
    /// One thread per output, O(n²): a teaching baseline, limited to
    /// `scan_abi::tuning::NAIVE_MAX_N` elements.
    Naive,
}

impl Algorithm {
    /// Every `--algo` choice with one line on what it is.
    pub fn choices() -> Vec<(&'static str, &'static str)> {
        let mut v = vec![
            ("single-pass", "single pass with decoupled look-back: one launch, reads n and writes n (default)"),
            (
                "hierarchical",
                "multi-kernel: tile scans, tile totals scanned recursively, offsets combined back (warp-shuffle tiles)",
            ),
            ("naive", "one thread per output sums its whole prefix, O(n^2) work (n <= 262144)"),
        ];
        for b in BlockAlgo::ALL {
            v.push((b.name(), b.describe()));
        }
        v
    }

    /// Parses an `--algo` value: a strategy, or a block algorithm (hierarchical with it).
    pub fn parse(s: &str, propagation: Propagation) -> Option<Algorithm> {
        match s {
            "single-pass" => Some(Algorithm::SinglePass),
            "hierarchical" => Some(Algorithm::Hierarchical { block: BlockAlgo::WarpShuffle, propagation }),
            "naive" => Some(Algorithm::Naive),
            _ => BlockAlgo::parse(s).map(|block| Algorithm::Hierarchical { block, propagation }),
        }
    }

    /// The hierarchical strategy with its default block algorithm and propagation.
    pub fn default_hierarchical() -> Algorithm {
        Algorithm::Hierarchical { block: BlockAlgo::WarpShuffle, propagation: Propagation::default() }
    }

    pub fn name(&self) -> String {
        match self {
            Algorithm::SinglePass => "single-pass".into(),
            Algorithm::Naive => "naive".into(),
            Algorithm::Hierarchical { block, propagation } => {
                format!("hierarchical/{}/{}", block.name(), propagation.name())
            }
        }
    }
}

/// How the single-pass scan publishes and reads tile status (see `scan_abi::status`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum StatusOrdering {
    /// Relaxed atomics: value and flag share one atomic word, so nothing more is needed.
    #[default]
    Relaxed,
    /// Release stores and acquire loads (a memory barrier per publication, an L1
    /// invalidation per poll on sm_90): kept to measure what they cost.
    AcquireRelease,
}

impl StatusOrdering {
    pub const fn name(self) -> &'static str {
        match self {
            StatusOrdering::Relaxed => "relaxed",
            StatusOrdering::AcquireRelease => "acq-rel",
        }
    }

    pub fn parse(s: &str) -> Option<StatusOrdering> {
        [StatusOrdering::Relaxed, StatusOrdering::AcquireRelease].into_iter().find(|o| o.name() == s)
    }
}

/// What to compute.
#[derive(Clone, Copy, Debug)]
pub struct ScanOptions<T> {
    pub op: Op,
    /// Exclusive: element i gets the combination of elements 0..i (the initial value, or the
    /// identity, at 0). Inclusive: of elements 0..=i.
    pub exclusive: bool,
    /// Combined in front of the first element (default: none, i.e. the operator's identity).
    pub init: Option<T>,
    pub algorithm: Algorithm,
    /// Single-pass only: memory ordering of the tile-status words.
    pub status_ordering: StatusOrdering,
    /// Single-pass only: nanoseconds the look-back sleeps between polls (default: the tuning
    /// table's value for the element size).
    pub backoff_ns: Option<u32>,
    /// Single-pass: combine in one fixed order, so float results are identical run after run
    /// and equal to [`crate::replica::single_pass`] bit for bit. The hierarchical and naive
    /// strategies have no timing-dependent step and are always deterministic.
    pub deterministic: bool,
    /// Single-pass only: `Some(true)` runs the pipelined kernel (a
    /// persistent grid of warp roles), `Some(false)` the one-tile-per-block kernel, `None` (the
    /// default) picks as `scan_abi::tuning::single_pass_pipelined` says (by size, type and
    /// operator).
    pub pipelined: Option<bool>,
}

impl<T> ScanOptions<T> {
    /// An inclusive scan with `op`, the default algorithm and no initial value.
    pub fn new(op: Op) -> Self {
        ScanOptions {
            op,
            exclusive: false,
            init: None,
            algorithm: Algorithm::default(),
            status_ordering: StatusOrdering::default(),
            backoff_ns: None,
            deterministic: false,
            pipelined: None,
        }
    }

    pub fn exclusive(mut self, exclusive: bool) -> Self {
        self.exclusive = exclusive;
        self
    }

    pub fn init(mut self, init: Option<T>) -> Self {
        self.init = init;
        self
    }

    pub fn algorithm(mut self, algorithm: Algorithm) -> Self {
        self.algorithm = algorithm;
        self
    }

    pub fn status_ordering(mut self, ordering: StatusOrdering) -> Self {
        self.status_ordering = ordering;
        self
    }

    pub fn backoff_ns(mut self, backoff_ns: Option<u32>) -> Self {
        self.backoff_ns = backoff_ns;
        self
    }

    pub fn deterministic(mut self, deterministic: bool) -> Self {
        self.deterministic = deterministic;
        self
    }

    pub fn pipelined(mut self, pipelined: Option<bool>) -> Self {
        self.pipelined = pipelined;
        self
    }
}

/// Temporary device storage for scans, reusable across calls: it grows when a call needs more
/// and is otherwise never reallocated, so repeated scans allocate nothing.
///
/// It holds two regions: the single-pass state (tile counter and tile-status words, which carry
/// over from call to call) and scratch space (tile totals of the hierarchical strategy), so one
/// strategy never disturbs the other's state.
///
/// Calls that share one `TempStorage` must be ordered: issue them on one stream, or synchronize
/// in between. It belongs to the context of the first [`Gpu`] that used it.
#[derive(Default)]
pub struct TempStorage {
    single_pass: Option<CudaSlice<u8>>,
    scratch: Option<CudaSlice<u8>>,
    /// Value of the single-pass tile counter before the next launch (it is never reset).
    counter_base: u32,
    /// Epoch of the last single-pass launch (status words of older epochs read as empty).
    epoch: u32,
}

/// `slot`'s buffer, (re)allocated zeroed when it holds fewer than `len` items (the old one freed
/// first), and whether it was.
pub(crate) fn at_least<'a, U: DeviceRepr + ValidAsZeroBits>(
    gpu: &Gpu,
    stream: &Arc<CudaStream>,
    slot: &'a mut Option<CudaSlice<U>>,
    what: &str,
    len: usize,
) -> Result<(&'a mut CudaSlice<U>, bool)> {
    let fresh = slot.as_ref().is_none_or(|b| b.len() < len);
    if fresh {
        *slot = None;
        *slot = Some(gpu.alloc_zeros::<U>(stream, what, len)?);
    }
    Ok((slot.as_mut().expect("allocated above"), fresh))
}

/// A device pointer to at least `bytes` bytes of `region`, (re)allocated zeroed when too small.
fn grow(region: &mut Option<CudaSlice<u8>>, gpu: &Gpu, stream: &Arc<CudaStream>, bytes: u64) -> Result<(u64, bool)> {
    if let Some(b) = region.as_ref() {
        if b.context() != gpu.context() {
            return Err(Error::invalid("this TempStorage belongs to another CUDA context"));
        }
    }
    let (buf, fresh) = at_least(gpu, stream, region, "scan temporary storage", bytes.max(1) as usize)?;
    let (ptr, _sync) = buf.device_ptr_mut(stream);
    Ok((ptr, fresh))
}

impl TempStorage {
    pub fn new() -> TempStorage {
        TempStorage::default()
    }

    /// Bytes currently held.
    pub fn capacity(&self) -> usize {
        self.single_pass.as_ref().map_or(0, |b| b.len()) + self.scratch.as_ref().map_or(0, |b| b.len())
    }

    /// Scratch space of at least `bytes` bytes (contents unspecified).
    pub(crate) fn scratch(&mut self, gpu: &Gpu, stream: &Arc<CudaStream>, bytes: u64) -> Result<u64> {
        if bytes == 0 {
            return Ok(0);
        }
        Ok(grow(&mut self.scratch, gpu, stream, bytes)?.0)
    }

    /// The first 8 scratch bytes as a buffer (for a count the host reads back).
    pub(crate) fn scratch_word(&mut self, gpu: &Gpu, stream: &Arc<CudaStream>) -> Result<&mut CudaSlice<u8>> {
        grow(&mut self.scratch, gpu, stream, 8)?;
        Ok(self.scratch.as_mut().expect("allocated above"))
    }

    /// Tile state for a single-pass-style launch over `n` elements in tiles of `shape` that
    /// publish values of `status_value_size` bytes: (tiles, pointer, epoch, counter base).
    pub(crate) fn tiles(
        &mut self,
        gpu: &Gpu,
        stream: &Arc<CudaStream>,
        n: u64,
        shape: scan_abi::tuning::TileShape,
        status_value_size: usize,
    ) -> Result<(u64, u64, u32, u32)> {
        let tiles = n.div_ceil(shape.tile() as u64);
        let tiles32 = u32::try_from(tiles).map_err(|_| Error::invalid(format!("{n} elements are too many tiles")))?;
        let bytes = scan_abi::status::temp_bytes(tiles, status_value_size);
        let (ptr, epoch, base) = self.single_pass(gpu, stream, bytes, tiles32)?;
        Ok((tiles, ptr, epoch, base))
    }

    /// Single-pass state for a launch needing `bytes` bytes that advances the tile counter by
    /// `advance`: (pointer, epoch, counter base).
    pub(crate) fn single_pass(
        &mut self,
        gpu: &Gpu,
        stream: &Arc<CudaStream>,
        bytes: u64,
        advance: u32,
    ) -> Result<(u64, u32, u32)> {
        let (ptr, fresh) = grow(&mut self.single_pass, gpu, stream, bytes)?;
        if fresh {
            self.epoch = 0;
            self.counter_base = 0;
        }
        if self.epoch >= EPOCH_MAX {
            if let Some(b) = self.single_pass.as_mut() {
                stream.memset_zeros(b)?;
            }
            self.epoch = 0;
            self.counter_base = 0;
        }
        self.epoch += 1;
        let base = self.counter_base;
        self.counter_base = base.wrapping_add(advance);
        Ok((ptr, self.epoch, base))
    }

    /// `r`, after forgetting the single-pass state if `r` is an error (a failed launch may have
    /// left it half-written).
    pub(crate) fn poison_on_error<R>(&mut self, r: Result<R>) -> Result<R> {
        if r.is_err() {
            self.poison();
        }
        r
    }

    /// Forgets the single-pass state after a failed launch: the next call starts afresh.
    pub(crate) fn poison(&mut self) {
        self.single_pass = None;
    }
}

/// The kernel flag bits for a scan.
pub(crate) fn kernel_flags(exclusive: bool, has_init: bool) -> u32 {
    (if exclusive { scan_abi::flags::EXCLUSIVE } else { 0 }) | (if has_init { scan_abi::flags::HAS_INIT } else { 0 })
}

/// `<prefix>_<type>_<op>`.
pub(crate) fn kernel_name(prefix: &str, ty: ElemType, op: Op) -> String {
    format!("{prefix}_{}_{}", ty.name(), op.name())
}

/// An error unless an output of `len` items has room for the `n` items of the input.
pub(crate) fn check_output(len: usize, n: u64, items: &str) -> Result<()> {
    if (len as u64) < n {
        return Err(Error::invalid(format!("the output holds {len} {items}, the input {n}")));
    }
    Ok(())
}

pub(crate) fn grid(blocks: u64, threads: u32, smem: u32) -> Result<LaunchConfig> {
    let blocks = u32::try_from(blocks)
        .ok()
        .filter(|&b| b <= i32::MAX as u32)
        .ok_or_else(|| Error::invalid(format!("{blocks} blocks exceed the grid limit")))?;
    Ok(LaunchConfig { grid_dim: (blocks, 1, 1), block_dim: (threads, 1, 1), shared_mem_bytes: smem })
}

/// One scan, on raw device pointers (`output` may equal `input`).
pub(crate) struct Job<'a, T> {
    pub gpu: &'a Gpu,
    pub stream: &'a Arc<CudaStream>,
    pub input: u64,
    pub output: u64,
    pub n: u64,
    pub opts: &'a ScanOptions<T>,
}

impl Gpu {
    /// Scans `input` into `output` on `stream`. Asynchronous like every stream operation:
    /// kernel faults surface at the next synchronization.
    pub fn scan<T: Element>(
        &self,
        stream: &Arc<CudaStream>,
        input: &impl DevicePtr<T>,
        output: &mut impl DevicePtrMut<T>,
        opts: &ScanOptions<T>,
        temp: &mut TempStorage,
    ) -> Result<()> {
        let n = input.len();
        check_output(output.len(), n as u64, "elements")?;
        let (i, _read) = input.device_ptr(stream);
        let (o, _write) = output.device_ptr_mut(stream);
        self.run(Job { gpu: self, stream, input: i, output: o, n: n as u64, opts }, temp)
    }

    /// Scans `data` in place on `stream` (single-pass and hierarchical strategies).
    pub fn scan_in_place<T: Element>(
        &self,
        stream: &Arc<CudaStream>,
        data: &mut impl DevicePtrMut<T>,
        opts: &ScanOptions<T>,
        temp: &mut TempStorage,
    ) -> Result<()> {
        if opts.algorithm == Algorithm::Naive {
            return Err(Error::invalid("the naive scan cannot run in place (every thread reads the whole prefix)"));
        }
        let n = data.len() as u64;
        let (p, _write) = data.device_ptr_mut(stream);
        self.run(Job { gpu: self, stream, input: p, output: p, n, opts }, temp)
    }

    /// Uploads `input`, scans it on the default stream and returns the result.
    pub fn scan_host<T: Element>(&self, input: &[T], opts: &ScanOptions<T>) -> Result<Vec<T>> {
        let stream = self.stream().clone();
        let src = self.upload(&stream, "scan input", input)?;
        let mut dst = self.alloc_zeros::<T>(&stream, "scan output", input.len())?;
        let mut temp = TempStorage::new();
        self.scan(&stream, &src, &mut dst, opts, &mut temp)?;
        stream.synchronize()?;
        self.download(&stream, &dst)
    }

    /// Bytes of temporary storage a scan of `n` elements of `T` with `algorithm` needs.
    pub fn temp_bytes<T: Element>(&self, n: u64, algorithm: Algorithm) -> u64 {
        temp_bytes(T::TYPE, n, algorithm)
    }

    fn run<T: Element>(&self, job: Job<'_, T>, temp: &mut TempStorage) -> Result<()> {
        T::identity(job.opts.op)?;
        if job.n == 0 {
            return Ok(());
        }
        let r = match job.opts.algorithm {
            Algorithm::SinglePass => single_pass::run(&job, temp),
            Algorithm::Hierarchical { block, propagation } => hierarchical::run(&job, block, propagation, temp),
            Algorithm::Naive => naive::run(&job),
        };
        temp.poison_on_error(r)
    }
}

/// Bytes of temporary storage for `n` elements of `ty` with `algorithm`.
pub fn temp_bytes(ty: ElemType, n: u64, algorithm: Algorithm) -> u64 {
    match algorithm {
        Algorithm::SinglePass => single_pass::temp_bytes(ty.size(), n),
        Algorithm::Hierarchical { .. } => hierarchical::temp_bytes(ty.size(), n),
        Algorithm::Naive => 0,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_output_shorter_than_the_input_is_refused() {
        assert!(check_output(5, 5, "elements").is_ok());
        assert!(check_output(6, 0, "elements").is_ok());
        let e = check_output(4, 5, "maps").unwrap_err().to_string();
        assert!(e.contains("the output holds 4 maps, the input 5"), "{e}");
    }
}
