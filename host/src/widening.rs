//! Scans into a wider type, `Gpu::widening_scan`: sums of narrow elements that would overflow
//! them (bytes into `u32`, as CUB's and torch's sums of `uint8` do), read at the narrow width.

use crate::element::Element;
use crate::error::{Error, Result};
use crate::launch::scan::{self as launch, Operands};
use crate::options::WideningOptions;
use crate::plan::check_output;
use crate::plan::scan::{aligned, widening, ScanPlan, WideningRequest};
use crate::runtime::Gpu;
use crate::temp::TempStorage;
use cudarc::driver::{CudaStream, DevicePtr, DevicePtrMut, DeviceRepr};
pub use scan_abi::widening::Source;
use scan_abi::Op;
use std::sync::Arc;

mod sealed {
    /// Implemented only here: [`super::Narrow`] requires it.
    pub trait Sealed {}
}

/// An element type a widening scan reads. Sealed, like [`Element`]: the type picks the kernel,
/// which reads the buffer as [`Self::SOURCE`] elements.
pub trait Narrow: sealed::Sealed + DeviceRepr + Copy + Send + Sync + 'static {
    const SOURCE: Source;
}

/// A narrow type that sums into `T`, each element converted as Rust's `as` converts it
/// (integers extended by their own signedness, `bool` as 0 or 1, half floats exactly).
pub trait WidensTo<T: Element>: Narrow {
    fn widen(self) -> T;
}

macro_rules! narrow {
    ($($t:ty: $src:ident => [$($to:ty),*];)*) => { $(
        impl sealed::Sealed for $t {}
        impl Narrow for $t {
            const SOURCE: Source = Source::$src;
        }
        $(impl WidensTo<$to> for $t {
            fn widen(self) -> $to {
                self as $to
            }
        })*
    )* };
}
narrow! {
    u8: U8 => [u32, u64, i64];
    i8: I8 => [u32, u64, i64];
    u16: U16 => [u32, u64, i64];
    i16: I16 => [u32, u64, i64];
    u32: U32 => [u64, i64];
    i32: I32 => [u64, i64];
}

impl sealed::Sealed for bool {}
impl Narrow for bool {
    // One byte holding 0 or 1.
    const SOURCE: Source = Source::U8;
}

macro_rules! bool_widens {
    ($($to:ty),*) => { $(
        impl WidensTo<$to> for bool {
            fn widen(self) -> $to {
                self as $to
            }
        }
    )* };
}
bool_widens!(u32, u64, i64);

macro_rules! half_widens {
    ($($t:ty: $src:ident),*) => { $(
        impl sealed::Sealed for $t {}
        impl Narrow for $t {
            const SOURCE: Source = Source::$src;
        }
        impl WidensTo<f32> for $t {
            fn widen(self) -> f32 {
                f32::from(self)
            }
        }
    )* };
}
half_widens!(half::f16: F16, half::bf16: Bf16);

impl Gpu {
    /// Sums `input` into the wider `output` on `stream` (inclusive, or exclusive with
    /// `opts.exclusive`), reading each element at its own width. Asynchronous.
    pub fn widening_scan<N: WidensTo<T>, T: Element>(
        &self,
        stream: &Arc<CudaStream>,
        input: &impl DevicePtr<N>,
        output: &mut impl DevicePtrMut<T>,
        opts: &WideningOptions<T>,
        temp: &mut TempStorage,
    ) -> Result<()> {
        let n = input.len() as u64;
        check_output(output.len(), n, "elements")?;
        let (i, _read) = input.device_ptr(stream);
        let (o, _write) = output.device_ptr_mut(stream);
        let plan = widening(self.tuning(), &request::<N, T>(n, opts, aligned(i) && aligned(o)))?;
        let identity = T::identity(Op::Add)?;
        let ops = Operands { input: i, output: o, n, init: opts.init.unwrap_or(identity), identity };
        launch::run(self, stream, &plan, ops, temp)
    }

    /// Uploads `input`, sums it into `T` on the default stream and returns the result.
    pub fn widening_scan_host<N: WidensTo<T>, T: Element>(
        &self,
        input: &[N],
        opts: &WideningOptions<T>,
    ) -> Result<Vec<T>> {
        let stream = self.stream().clone();
        let src = self.upload(&stream, "widening scan input", input)?;
        let mut dst = self.alloc_zeros::<T>(&stream, "widening scan output", input.len())?;
        let mut temp = TempStorage::new();
        self.widening_scan(&stream, &src, &mut dst, opts, &mut temp)?;
        stream.synchronize()?;
        self.download(&stream, &dst)
    }

    /// Bytes of temporary storage a widening scan of `n` elements of `N` into `T` needs (buffers
    /// on 16-byte boundaries, as fresh allocations are).
    pub fn widening_scan_temp_bytes<N: WidensTo<T>, T: Element>(
        &self,
        n: u64,
        opts: &WideningOptions<T>,
    ) -> Result<u64> {
        let plan: ScanPlan = widening(self.tuning(), &request::<N, T>(n, opts, true))?;
        let (state, scratch) = plan.temp_bytes();
        state.checked_add(scratch).ok_or_else(|| Error::invalid("the temporary storage overflows"))
    }
}

/// The planner's request for a widening sum of `n` elements with `opts`.
pub(crate) fn request<N: WidensTo<T>, T: Element>(n: u64, opts: &WideningOptions<T>, aligned: bool) -> WideningRequest {
    WideningRequest {
        src: N::SOURCE,
        ty: T::TYPE,
        n,
        exclusive: opts.exclusive,
        has_init: opts.init.is_some(),
        deterministic: opts.deterministic,
        kernel: opts.kernel,
        aligned,
    }
}
