//! Errors a caller can act on. Nothing in the library panics on a user's mistake or on a missing
//! or failing GPU; every such case is one of these.

use cudarc::driver::{sys::CUresult, DriverError};

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("no CUDA driver found (libcuda.so could not be loaded): install the NVIDIA driver, or run on a machine with an NVIDIA GPU")]
    NoDriver,

    #[error("no CUDA device found{0}")]
    NoDevice(String),

    #[error("out of device memory: {what} needs {needed} bytes, {free} of {total} bytes are free")]
    OutOfMemory { what: String, needed: u64, free: u64, total: u64 },

    #[error("the CUDA driver rejected the kernels' PTX (module {module}): {source}; the driver may be older than the PTX ISA 8.3 the kernels need (CUDA 12.3+), or the GPU older than the target architecture")]
    PtxRejected { module: String, source: DriverError },

    #[error("kernel {kernel} failed: {source}")]
    Kernel { kernel: String, source: DriverError },

    #[error("{0}")]
    InvalidArgument(String),

    #[error("NCCL could not be loaded: install it (for example `pip install nvidia-nccl-cu13`) and make `libnccl.so` findable, e.g. `ln -s <site-packages>/nvidia/nccl/lib/libnccl.so.2 <dir>/libnccl.so` with <dir> on LD_LIBRARY_PATH")]
    NoNccl,

    #[error("the collective failed on rank {rank}: {message}")]
    Collective { rank: usize, message: String },

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
}
