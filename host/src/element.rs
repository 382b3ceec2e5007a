//! Host-side element types: what the kernels compute on (from `scan-abi`) plus what cudarc needs
//! to move them, and the mapping from a runtime [`Op`] to its operator type.

use crate::error::{Error, Result};
use cudarc::driver::{DeviceRepr, ValidAsZeroBits};
use scan_abi::op::{Add, Affine, And, Max, Min, Mul, Or, Xor};
pub use scan_abi::{ElemType, Op, ScanOp};
use std::fmt::{Debug, Display};
use std::str::FromStr;

/// Something generic over the operator type, called once [`Element::visit_op`] has chosen it.
pub trait OpVisitor<T> {
    type Output;
    fn visit<O: ScanOp<T>>(self) -> Self::Output;
}

mod sealed {
    /// Implemented only here, for the primitive types with kernels: [`super::Element`] requires it.
    pub trait Sealed {}
}

/// An element type with kernels: the primitive types of [`ElemType`]. Sealed, as
/// [`scan_abi::Element`] is: the type picks the kernel, so another type's buffers would be read
/// and written as if they held these. A downstream implementation is refused:
///
/// ```compile_fail,E0277
/// use gpu_scan::cudarc::driver::{DeviceRepr, ValidAsZeroBits};
/// use gpu_scan::{ElemType, Element, Op, OpVisitor, Result};
///
/// #[derive(Clone, Copy, Debug, Default, PartialEq, PartialOrd)]
/// struct Narrow(u32);
///
/// unsafe impl DeviceRepr for Narrow {}
/// unsafe impl ValidAsZeroBits for Narrow {}
///
/// impl std::fmt::Display for Narrow {
///     fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
///         write!(f, "{}", self.0)
///     }
/// }
///
/// impl std::str::FromStr for Narrow {
///     type Err = std::num::ParseIntError;
///     fn from_str(s: &str) -> std::result::Result<Narrow, Self::Err> {
///         s.parse().map(Narrow)
///     }
/// }
///
/// impl scan_abi::Element for Narrow {
///     const TYPE: ElemType = ElemType::U64;
///     fn add(a: Self, b: Self) -> Self { Narrow(a.0.wrapping_add(b.0)) }
///     fn mul(a: Self, b: Self) -> Self { Narrow(a.0.wrapping_mul(b.0)) }
///     fn min(a: Self, b: Self) -> Self { Narrow(a.0.min(b.0)) }
///     fn max(a: Self, b: Self) -> Self { Narrow(a.0.max(b.0)) }
///     fn zero() -> Self { Narrow(0) }
///     fn one() -> Self { Narrow(1) }
///     fn min_identity() -> Self { Narrow(u32::MAX) }
///     fn max_identity() -> Self { Narrow(0) }
///     fn to_bits(self) -> u64 { self.0 as u64 }
///     fn from_bits(bits: u64) -> Self { Narrow(bits as u32) }
///     fn as_f64(self) -> f64 { self.0 as f64 }
///     fn order_key(self) -> u64 { self.0 as u64 }
/// }
///
/// impl Element for Narrow {
///     fn visit_op<V: OpVisitor<Self>>(op: Op, _: V) -> Result<V::Output> {
///         Err(gpu_scan::element::unsupported(op, ElemType::U64))
///     }
///     fn to_f64(self) -> f64 {
///         self.0 as f64
///     }
/// }
/// ```
pub trait Element:
    sealed::Sealed + scan_abi::Element + DeviceRepr + ValidAsZeroBits + Debug + Display + FromStr + Unpin
{
    /// Calls `v.visit::<O>()` with the operator type of `op`, or fails when `op` does not exist
    /// for this type (bitwise operators on floats, for instance).
    fn visit_op<V: OpVisitor<Self>>(op: Op, v: V) -> Result<V::Output>;

    /// The value as f64 (exact for floats; used to check float results).
    fn to_f64(self) -> f64;

    /// The identity of `op` for this type.
    fn identity(op: Op) -> Result<Self> {
        struct Id;
        impl<T: Element> OpVisitor<T> for Id {
            type Output = T;
            fn visit<O: ScanOp<T>>(self) -> T {
                O::identity()
            }
        }
        Self::visit_op(op, Id)
    }
}

/// The error for an operator that does not exist for a type.
pub fn unsupported(op: Op, ty: ElemType) -> Error {
    let supported: Vec<&str> = Op::ALL.iter().filter(|o| o.supports(ty)).map(|o| o.name()).collect();
    Error::UnsupportedOp { function: "scans", op, ty, supported: supported.join(", ") }
}

macro_rules! element {
    ($t:ty, [$($op:ident),*]) => {
        impl sealed::Sealed for $t {}
        impl Element for $t {
            fn to_f64(self) -> f64 {
                self as f64
            }

            fn visit_op<V: OpVisitor<Self>>(op: Op, v: V) -> Result<V::Output> {
                match op {
                    $(Op::$op => Ok(v.visit::<$op>()),)*
                    #[allow(unreachable_patterns)]
                    _ => Err(unsupported(op, <$t as scan_abi::Element>::TYPE)),
                }
            }
        }
    };
}
element!(u8, [Add, Mul, Min, Max, And, Or, Xor]);
element!(u16, [Add, Mul, Min, Max, And, Or, Xor]);
element!(u32, [Add, Mul, Min, Max, And, Or, Xor]);
element!(i32, [Add, Mul, Min, Max, And, Or, Xor]);
element!(u64, [Add, Mul, Min, Max, And, Or, Xor, Affine]);
element!(i64, [Add, Mul, Min, Max, And, Or, Xor]);
element!(f32, [Add, Mul, Min, Max]);
element!(f64, [Add, Mul, Min, Max]);

mod key_sealed {
    /// Implemented only here, for the integer types: [`super::Key`] requires it.
    pub trait Sealed {}
}

/// A key type of [`crate::Gpu::scan_by_key`]: every integer type. Keys are only compared for
/// equality, bit for bit, so a signed type shares the kernels of the unsigned type of its width
/// ([`Key::KERNEL`]). Sealed, as [`Element`] is. Floats are not keys (`-0.0` equals `0.0` but
/// not in its bits, and NaN equals nothing), so a scan by float keys does not compile:
///
/// ```compile_fail,E0277
/// # fn by_float_keys(
/// #     gpu: &gpu_scan::Gpu,
/// #     stream: &std::sync::Arc<gpu_scan::cudarc::driver::CudaStream>,
/// #     keys: &gpu_scan::cudarc::driver::CudaSlice<f32>,
/// #     input: &gpu_scan::cudarc::driver::CudaSlice<u32>,
/// #     output: &mut gpu_scan::cudarc::driver::CudaSlice<u32>,
/// #     temp: &mut gpu_scan::TempStorage,
/// # ) -> gpu_scan::Result<()> {
/// gpu.scan_by_key(stream, keys, input, output, &gpu_scan::SegmentedOptions::new(gpu_scan::Op::Add), temp)
/// # }
/// ```
pub trait Key: key_sealed::Sealed + DeviceRepr + Copy + Debug + PartialEq + Send + Sync + 'static {
    /// The element type whose kernels read these keys: one of the same width.
    const KERNEL: ElemType;
}

macro_rules! key {
    ($($t:ty => $kernel:ident),*) => {$(
        impl key_sealed::Sealed for $t {}
        impl Key for $t {
            const KERNEL: ElemType = ElemType::$kernel;
        }
    )*};
}
key!(u8 => U8, i8 => U8, u16 => U16, i16 => U16, u32 => U32, i32 => I32, u64 => U64, i64 => I64);

/// Runs `$body` with `$T` bound to the Rust type of the runtime [`ElemType`] `$ty`.
#[macro_export]
macro_rules! with_elem_type {
    ($ty:expr, $T:ident => $body:expr) => {
        match $ty {
            $crate::ElemType::U8 => {
                type $T = u8;
                $body
            }
            $crate::ElemType::U16 => {
                type $T = u16;
                $body
            }
            $crate::ElemType::U32 => {
                type $T = u32;
                $body
            }
            $crate::ElemType::I32 => {
                type $T = i32;
                $body
            }
            $crate::ElemType::U64 => {
                type $T = u64;
                $body
            }
            $crate::ElemType::I64 => {
                type $T = i64;
                $body
            }
            $crate::ElemType::F32 => {
                type $T = f32;
                $body
            }
            $crate::ElemType::F64 => {
                type $T = f64;
                $body
            }
        }
    };
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_supported_pair_has_an_operator_type_and_no_other() {
        for ty in ElemType::ALL {
            for op in Op::ALL {
                let ok = with_elem_type!(ty, T => T::identity(op).is_ok());
                assert_eq!(ok, op.supports(ty), "{} {}", ty.name(), op.name());
            }
        }
    }

    #[test]
    fn unsupported_operator_names_the_alternatives() {
        let e = f32::identity(Op::Xor).unwrap_err().to_string();
        assert!(e.contains("`xor` is not defined for f32") && e.contains("add, mul, min, max"), "{e}");
    }
}
