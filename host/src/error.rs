//! Errors a caller can act on. Nothing in the library panics on a user's mistake or on a missing
//! or failing GPU; every such case is one of these variants, each with a message that says what
//! to do. Match on the variant to handle a case; print the error (`Display`, not `Debug`) to
//! show it to a person.

use cudarc::driver::{sys::CUresult, DriverError};
use scan_abi::{ElemType, Op};

pub use scan_abi::tuning::TuningError;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// `libcuda.so` could not be loaded: no NVIDIA driver on this machine.
    #[error("no CUDA driver found (libcuda.so could not be loaded): install the NVIDIA driver, or run on a machine with an NVIDIA GPU")]
    NoDriver,

    /// The driver is there but reports no device (or none with the ordinal asked for).
    #[error("no CUDA device found{0}")]
    NoDevice(String),

    /// An allocation of `needed` bytes for `what` does not fit the device's free memory.
    #[error("out of device memory: {what} needs {needed} bytes, {free} of {total} bytes are free")]
    OutOfMemory { what: String, needed: u64, free: u64, total: u64 },

    /// The GPU is older than the architecture the kernels were compiled for: the machine's
    /// problem, not the call's (rebuild the kernels for it, or run on a newer GPU).
    #[error("{name} has compute capability {}.{}, but the kernels were built for sm_{kernel_arch}; rebuild them for this GPU with GPU_SCAN_ARCH=sm_{}{} cargo build", .compute_capability.0, .compute_capability.1, .compute_capability.0, .compute_capability.1)]
    UnsupportedDevice { name: String, compute_capability: (i32, i32), kernel_arch: u32 },

    /// The driver refused to load the kernels (an old driver, or a GPU older than the target).
    #[error("the CUDA driver rejected the kernels' PTX (module {module}): {source}; the driver may be older than the PTX ISA 8.3 the kernels need (CUDA 12.3+), or the GPU older than the target architecture")]
    PtxRejected { module: String, source: DriverError },

    /// A kernel failed to launch or to run.
    #[error("kernel {kernel} failed: {source}")]
    Kernel { kernel: String, source: DriverError },

    /// A buffer is shorter (or, where lengths must be equal, of another length) than the call
    /// needs: `buffer` holds `len` items where `needed` are required.
    #[error("{buffer} holds {len} {unit}, but {needed} are needed")]
    LengthMismatch { buffer: &'static str, len: u64, needed: u64, unit: &'static str },

    /// The element type has no kernels for this function.
    #[error("{function} is not available for {}; it is for {supported}", ty.name())]
    UnsupportedType { function: &'static str, ty: ElemType, supported: String },

    /// The operator is not defined for this element type, or not offered by this function.
    #[error("operator `{}` is not defined for {} in {function}; operators there: {supported}", op.name(), ty.name())]
    UnsupportedOp { function: &'static str, op: Op, ty: ElemType, supported: String },

    /// A size, count or value is outside what the function (or the kernels' 32-bit indices)
    /// can take.
    #[error("{what} is {value}, but it must be {valid}")]
    OutOfRange { what: String, value: String, valid: String },

    /// The kernel asked for cannot run this request (say, a kernel that needs buffers on
    /// 16-byte boundaries given unaligned ones). The library never substitutes another.
    #[error("the {kernel} kernel cannot run this request: {why}")]
    KernelUnavailable { kernel: String, why: String },

    /// A [`crate::Tuning`] value outside its valid range.
    #[error(transparent)]
    Tuning(#[from] TuningError),

    /// Another mistake in a call's arguments, described.
    #[error("{0}")]
    InvalidArgument(String),

    /// The NCCL library is needed (scans across GPUs) and could not be loaded.
    #[error("NCCL could not be loaded: install it (for example `pip install nvidia-nccl-cu13`) and make `libnccl.so` findable, e.g. `ln -s <site-packages>/nvidia/nccl/lib/libnccl.so.2 <dir>/libnccl.so` with <dir> on LD_LIBRARY_PATH")]
    NoNccl,

    /// A collective operation of a multi-GPU group failed.
    #[error("the collective failed on rank {rank}: {message}")]
    Collective { rank: usize, message: String },

    /// Reading or writing the host side of a streamed scan (a file, a pipe) failed.
    #[error("{what}: {source}")]
    Io { what: String, source: std::io::Error },

    /// A streamed scan failed at chunk `chunk` of `chunks` (elements `start..end`); nothing
    /// after it was written.
    #[error("chunk {} of {chunks} (elements {start}..{end}) failed: {source}", chunk + 1)]
    Chunk { chunk: u64, chunks: u64, start: u64, end: u64, source: Box<Error> },

    /// Any other CUDA driver failure.
    #[error("CUDA driver call failed: {0}")]
    Driver(DriverError),
}

impl From<DriverError> for Error {
    fn from(e: DriverError) -> Self {
        match e.0 {
            CUresult::CUDA_ERROR_NO_DEVICE => Error::NoDevice(String::new()),
            _ => Error::Driver(e),
        }
    }
}

impl Error {
    /// Wraps a driver error from launching or running `kernel`.
    pub(crate) fn kernel(kernel: impl std::fmt::Display, e: DriverError) -> Error {
        match e.0 {
            CUresult::CUDA_ERROR_OUT_OF_MEMORY => Error::Driver(e),
            _ => Error::Kernel { kernel: kernel.to_string(), source: e },
        }
    }

    /// An [`Error::InvalidArgument`] with `msg`.
    pub fn invalid(msg: impl Into<String>) -> Error {
        Error::InvalidArgument(msg.into())
    }

    /// An [`Error::OutOfRange`]: `what` is `value`, and must be `valid`.
    pub fn out_of_range(what: impl Into<String>, value: impl std::fmt::Display, valid: impl Into<String>) -> Error {
        Error::OutOfRange { what: what.into(), value: value.to_string(), valid: valid.into() }
    }

    /// An [`Error::KernelUnavailable`].
    pub fn kernel_unavailable(kernel: impl std::fmt::Display, why: impl Into<String>) -> Error {
        Error::KernelUnavailable { kernel: kernel.to_string(), why: why.into() }
    }

    /// Whether this error is the caller's mistake (bad arguments, types, lengths or tuning)
    /// rather than the machine's (no driver, no device, memory, a driver or kernel failure).
    pub fn is_usage(&self) -> bool {
        if let Error::Chunk { source, .. } = self {
            return source.is_usage();
        }
        matches!(
            self,
            Error::LengthMismatch { .. }
                | Error::UnsupportedType { .. }
                | Error::UnsupportedOp { .. }
                | Error::OutOfRange { .. }
                | Error::KernelUnavailable { .. }
                | Error::Tuning(_)
                | Error::InvalidArgument(_)
        )
    }
}

/// An [`Error::LengthMismatch`] unless `len >= needed`.
pub(crate) fn at_least(buffer: &'static str, len: u64, needed: u64, unit: &'static str) -> Result<()> {
    if len < needed {
        return Err(Error::LengthMismatch { buffer, len, needed, unit });
    }
    Ok(())
}

/// An [`Error::LengthMismatch`] unless `len == needed`.
pub(crate) fn exactly(buffer: &'static str, len: u64, needed: u64, unit: &'static str) -> Result<()> {
    if len != needed {
        return Err(Error::LengthMismatch { buffer, len, needed, unit });
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_gpu_too_old_for_the_kernels_is_the_machines_problem() {
        let e = Error::UnsupportedDevice { name: "Tesla V100".into(), compute_capability: (7, 0), kernel_arch: 90 };
        assert!(!e.is_usage());
        let text = e.to_string();
        assert!(text.contains("compute capability 7.0") && text.contains("sm_90") && text.contains("sm_70"), "{text}");
    }
}
