//! Stream compaction: keep the elements that satisfy a predicate, stable, and count them, in one
//! pass (`gpu/src/kernels/compact.rs`): each tile counts its kept elements, the counts are scanned
//! across tiles by the single-pass look-back, and each kept element goes to its offset. The
//! positions of flagged elements are the same compaction of the flag bytes, each tile writing
//! where its kept bytes lie.

use crate::element::Element;
use crate::error::Error;
use crate::error::{at_least, Result};
use crate::launch::compact::{self as launch, Operands};
use crate::launch::zero;
use crate::options::{CompactKernel, CompactOptions, Keep};
use crate::plan::check_output;
use crate::plan::compact::{plan, positions, CompactPlan};
use crate::plan::scan::aligned;
use crate::runtime::Gpu;
use crate::temp::TempStorage;
use cudarc::driver::{CudaStream, DevicePtr, DevicePtrMut};
use scan_abi::kernel::predicate;
use scan_abi::ElemType;
use std::sync::Arc;

impl<T: Element> Keep<T> {
    /// The kernel's `pred` and `threshold` arguments.
    fn code(&self) -> (u32, T) {
        match *self {
            Keep::Greater(t) => (predicate::GREATER, t),
            Keep::NonZero => (predicate::NONZERO, T::zero()),
            Keep::Flags => (predicate::FLAGS, T::zero()),
        }
    }
}

/// The raw operands of one compaction.
struct Ptrs {
    input: u64,
    flags: u64,
    output: u64,
    count: u64,
    n: u64,
}

impl Gpu {
    /// Copies the elements of `input` that `opts.keep` selects to the front of `output`, in
    /// order, and writes how many there are to `count[0]`. Asynchronous: nothing waits;
    /// [`Gpu::read_count`] reads the count back.
    ///
    /// Requires `output.len() >= input.len()` and `count.len() >= 1`; keeping by flags
    /// ([`Keep::Flags`]) is [`Gpu::compact_flagged`].
    pub fn compact<T: Element>(
        &self,
        stream: &Arc<CudaStream>,
        input: &impl DevicePtr<T>,
        output: &mut impl DevicePtrMut<T>,
        count: &mut impl DevicePtrMut<u64>,
        opts: &CompactOptions<T>,
        temp: &mut TempStorage,
    ) -> Result<()> {
        let n = input.len() as u64;
        check_output(output.len(), n, "elements")?;
        at_least("the count", count.len() as u64, 1, "values")?;
        if opts.keep == Keep::Flags {
            return Err(Error::invalid("keeping by flags takes the flags array: call compact_flagged"));
        }
        let (pred, threshold) = opts.keep.code();
        let (i, _r) = input.device_ptr(stream);
        let (o, _w) = output.device_ptr_mut(stream);
        let (c, _wc) = count.device_ptr_mut(stream);
        let ptrs = Ptrs { input: i, flags: 0, output: o, count: c, n };
        self.compact_ptrs(stream, &ptrs, pred, threshold, opts.kernel, temp)
    }

    /// Copies the elements of `input` whose byte in `flags` is not zero to the front of `output`,
    /// in order, and writes how many there are to `count[0]`. Asynchronous, like
    /// [`Gpu::compact`]. `opts.keep` must be [`Keep::Flags`].
    ///
    /// Requires `flags.len() == input.len()`, `output.len() >= input.len()`, `count.len() >= 1`.
    // The API shape's arguments (stream, buffers, options, storage) plus the flags.
    #[allow(clippy::too_many_arguments)]
    pub fn compact_flagged<T: Element>(
        &self,
        stream: &Arc<CudaStream>,
        input: &impl DevicePtr<T>,
        flags: &impl DevicePtr<u8>,
        output: &mut impl DevicePtrMut<T>,
        count: &mut impl DevicePtrMut<u64>,
        opts: &CompactOptions<T>,
        temp: &mut TempStorage,
    ) -> Result<()> {
        let n = input.len() as u64;
        crate::error::exactly("the flags", flags.len() as u64, n, "bytes")?;
        check_output(output.len(), n, "elements")?;
        at_least("the count", count.len() as u64, 1, "values")?;
        if opts.keep != Keep::Flags {
            return Err(Error::invalid("compact_flagged keeps by flags: pass CompactOptions::new(Keep::Flags)"));
        }
        let (i, _r) = input.device_ptr(stream);
        let (f, _rf) = flags.device_ptr(stream);
        let (o, _w) = output.device_ptr_mut(stream);
        let (c, _wc) = count.device_ptr_mut(stream);
        let ptrs = Ptrs { input: i, flags: f, output: o, count: c, n };
        self.compact_ptrs(stream, &ptrs, predicate::FLAGS, T::zero(), opts.kernel, temp)
    }

    /// Sets `flags[i]` to 1 where `opts.keep` keeps `input[i]` and to 0 elsewhere: the flags of
    /// a comparison ([`Keep::Greater`], [`Keep::NonZero`]), tested as [`Gpu::compact`] tests it,
    /// so that [`Gpu::flagged_indices`] of them gives the input positions of the elements it
    /// keeps. Asynchronous; no temporary storage.
    ///
    /// Requires `flags.len() == input.len()`.
    pub fn kept_flags<T: Element>(
        &self,
        stream: &Arc<CudaStream>,
        input: &impl DevicePtr<T>,
        flags: &mut impl DevicePtrMut<u8>,
        opts: &CompactOptions<T>,
    ) -> Result<()> {
        let n = input.len() as u64;
        crate::error::exactly("the flags", flags.len() as u64, n, "bytes")?;
        if opts.keep == Keep::Flags {
            return Err(Error::invalid("kept_flags takes a comparison: Keep::Greater or Keep::NonZero"));
        }
        let launch = crate::plan::compact::kept_flags(self.tuning(), T::TYPE, n)?;
        if n == 0 {
            return Ok(());
        }
        let (pred, threshold) = opts.keep.code();
        let (i, _r) = input.device_ptr(stream);
        let (f, _w) = flags.device_ptr_mut(stream);
        launch::kept_flags(self, stream, &launch, i, n, pred, threshold, f)
    }

    /// Bytes of temporary storage a compaction of `n` elements of `T` with `kernel` needs.
    pub fn compact_temp_bytes<T: Element>(&self, n: u64, kernel: CompactKernel) -> Result<u64> {
        if n == 0 {
            return Ok(0);
        }
        let plan = plan(self.tuning(), T::TYPE, n, predicate::GREATER, kernel, true)?;
        // The tile state, and the count's word in the scratch region.
        Ok(plan.state.bytes() + 8)
    }

    /// Writes the positions `i` where `flags[i] != 0` to the front of `indices`, in order, and how
    /// many there are to `count[0]` (NumPy's `flatnonzero`; with a compaction's flags, the input
    /// positions of the elements it keeps). Positions are `u32` (up to 2^32 flags) or `u64`.
    /// Asynchronous, like [`Gpu::compact`]; `opts.keep` must be [`Keep::Flags`], and the kernel
    /// is the one-pass tiles kernel (auto or tiles).
    ///
    /// Requires `indices.len() >= flags.len()` and `count.len() >= 1`. One pass: the flags are
    /// compacted as bytes, each tile writing where its set bytes lie.
    pub fn flagged_indices<I: Element>(
        &self,
        stream: &Arc<CudaStream>,
        flags: &impl DevicePtr<u8>,
        indices: &mut impl DevicePtrMut<I>,
        count: &mut impl DevicePtrMut<u64>,
        opts: &CompactOptions<I>,
        temp: &mut TempStorage,
    ) -> Result<()> {
        let n = flags.len() as u64;
        check_output(indices.len(), n, "indices")?;
        at_least("the count", count.len() as u64, 1, "values")?;
        if opts.keep != Keep::Flags {
            return Err(Error::invalid("flagged_indices keeps by flags: pass CompactOptions::new(Keep::Flags)"));
        }
        let plan = self.positions_plan::<I>(n, opts.kernel)?;
        let (f, _rf) = flags.device_ptr(stream);
        let (o, _w) = indices.device_ptr_mut(stream);
        let (c, _wc) = count.device_ptr_mut(stream);
        if n == 0 {
            return zero(stream, c, 8);
        }
        let ops = Operands { input: f, flags: f, output: o, n, pred: predicate::NONZERO, threshold: 0u8 };
        launch::run(self, stream, &plan, ops, temp)?;
        temp.copy_scratch_word(stream, c)
    }

    /// Bytes of temporary storage [`Gpu::flagged_indices`] of `n` flags into `I` with `kernel`
    /// needs: the tile state, and the count's word in the scratch region.
    pub fn flagged_indices_temp_bytes<I: Element>(&self, n: u64, kernel: CompactKernel) -> Result<u64> {
        let plan = self.positions_plan::<I>(n, kernel)?;
        Ok(if n == 0 { 0 } else { plan.state.bytes() + 8 })
    }

    /// The plan of [`Gpu::flagged_indices`] of `n` flags into `I` positions.
    fn positions_plan<I: Element>(&self, n: u64, kernel: CompactKernel) -> Result<CompactPlan> {
        let largest = match I::TYPE {
            ElemType::U32 => 1 << 32,
            ElemType::U64 => u64::MAX,
            ty => return Err(Error::UnsupportedType { function: "flagged_indices", ty, supported: "u32 u64".into() }),
        };
        if n > largest {
            return Err(Error::out_of_range("the flags of u32 positions", n, "at most 2^32; take u64 positions"));
        }
        if kernel == CompactKernel::Pipelined {
            return Err(Error::invalid("flagged_indices has one kernel, tiles: pass CompactKernel::Auto or Tiles"));
        }
        positions(self.tuning(), I::TYPE, n.max(1))
    }

    /// Copies the count at `count[0]` back: this waits for `stream`.
    pub fn read_count(&self, stream: &Arc<CudaStream>, count: &impl DevicePtr<u64>) -> Result<u64> {
        at_least("the count", count.len() as u64, 1, "values")?;
        let mut word = [0u64];
        let (c, _r) = count.device_ptr(stream);
        // SAFETY: `count` holds at least one u64 (checked), `word` is one u64 on the host.
        unsafe { cudarc::driver::result::memcpy_dtoh_async(&mut word, c, stream.cu_stream()) }?;
        stream.synchronize()?;
        Ok(word[0])
    }

    fn compact_ptrs<T: Element>(
        &self,
        stream: &Arc<CudaStream>,
        p: &Ptrs,
        pred: u32,
        threshold: T,
        kernel: CompactKernel,
        temp: &mut TempStorage,
    ) -> Result<()> {
        let plan = plan(self.tuning(), T::TYPE, p.n.max(1), pred, kernel, aligned(p.input))?;
        if p.n == 0 {
            return zero(stream, p.count, 8);
        }
        let ops = Operands { input: p.input, flags: p.flags, output: p.output, n: p.n, pred, threshold };
        launch::run(self, stream, &plan, ops, temp)?;
        temp.copy_scratch_word(stream, p.count)
    }
}
