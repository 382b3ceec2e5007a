//! Element types and their arithmetic.
//!
//! Integer addition and multiplication wrap (two's complement), as they do on the GPU. Float
//! `min`/`max` follow IEEE 754 minNum/maxNum: a NaN operand is ignored unless both are NaN. That
//! is what PTX `min.f32`/`max.f32` compute and what `f32::min` computes on the CPU; `f64` takes a
//! compare and a select, the same code on both. The GPU and the reference agree bit for bit on
//! these operators.

use num_traits::{Bounded, One, PrimInt, WrappingAdd, WrappingMul, Zero};

/// The element types the kernels are compiled for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ElemType {
    U8,
    U16,
    U32,
    I32,
    U64,
    I64,
    F32,
    F64,
}

impl ElemType {
    pub const ALL: [ElemType; 8] = [
        ElemType::U8,
        ElemType::U16,
        ElemType::U32,
        ElemType::I32,
        ElemType::U64,
        ElemType::I64,
        ElemType::F32,
        ElemType::F64,
    ];

    pub const fn name(self) -> &'static str {
        match self {
            ElemType::U8 => "u8",
            ElemType::U16 => "u16",
            ElemType::U32 => "u32",
            ElemType::I32 => "i32",
            ElemType::U64 => "u64",
            ElemType::I64 => "i64",
            ElemType::F32 => "f32",
            ElemType::F64 => "f64",
        }
    }

    pub const fn size(self) -> usize {
        match self {
            ElemType::U8 => 1,
            ElemType::U16 => 2,
            ElemType::U32 | ElemType::I32 | ElemType::F32 => 4,
            ElemType::U64 | ElemType::I64 | ElemType::F64 => 8,
        }
    }

    pub const fn is_float(self) -> bool {
        matches!(self, ElemType::F32 | ElemType::F64)
    }

    pub fn parse(s: &str) -> Option<ElemType> {
        ElemType::ALL.into_iter().find(|t| t.name() == s)
    }
}

mod sealed {
    /// Implemented only here, for the types of [`super::ElemType`]: [`super::Element`] requires
    /// it, so no other crate can implement [`super::Element`].
    pub trait Sealed {}
}

/// A value the kernels can scan. Implemented for the primitive types of [`ElemType`], and sealed:
/// [`Element::TYPE`] picks the kernel, which reads and writes `TYPE.size()` bytes an element, so
/// an implementation for any other type would let kernels run past its buffers. A downstream
/// implementation is refused:
///
/// ```compile_fail,E0277
/// use scan_abi::{ElemType, Element};
///
/// #[derive(Clone, Copy, PartialEq, PartialOrd, Default)]
/// struct Narrow(u32);
///
/// impl Element for Narrow {
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
/// ```
pub trait Element: sealed::Sealed + Copy + PartialEq + PartialOrd + Default + Send + Sync + 'static {
    const TYPE: ElemType;
    /// Wrapping for integers.
    fn add(a: Self, b: Self) -> Self;
    /// Wrapping for integers.
    fn mul(a: Self, b: Self) -> Self;
    /// IEEE minNum for floats.
    fn min(a: Self, b: Self) -> Self;
    /// IEEE maxNum for floats.
    fn max(a: Self, b: Self) -> Self;
    fn zero() -> Self;
    fn one() -> Self;
    /// Identity of `min`: the largest value (+inf for floats).
    fn min_identity() -> Self;
    /// Identity of `max`: the smallest value (-inf for floats).
    fn max_identity() -> Self;
    /// The value's bits, zero-extended (used to pack tile-status words and warp shuffles).
    fn to_bits(self) -> u64;
    /// Inverse of [`Element::to_bits`]; higher bits are ignored.
    fn from_bits(bits: u64) -> Self;
    /// The value as an f64 (rounded for 64-bit integers beyond 2^53).
    fn as_f64(self) -> f64;
    /// Unsigned bits whose order is the value's: signed integers with the sign bit flipped;
    /// floats with negatives inverted and positives' sign bit set, so `-0.0` sorts before `+0.0`,
    /// and every NaN as all ones, after `+inf`.
    fn order_key(self) -> u64;
}

/// Integer elements, which also support the bitwise operators.
pub trait IntElement: Element + PrimInt {}

macro_rules! int_element {
    ($($t:ty => $e:ident),*) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const TYPE: ElemType = ElemType::$e;
            #[inline(always)] fn add(a: Self, b: Self) -> Self { WrappingAdd::wrapping_add(&a, &b) }
            #[inline(always)] fn mul(a: Self, b: Self) -> Self { WrappingMul::wrapping_mul(&a, &b) }
            #[inline(always)] fn min(a: Self, b: Self) -> Self { if b < a { b } else { a } }
            #[inline(always)] fn max(a: Self, b: Self) -> Self { if b > a { b } else { a } }
            #[inline(always)] fn zero() -> Self { Zero::zero() }
            #[inline(always)] fn one() -> Self { One::one() }
            #[inline(always)] fn min_identity() -> Self { Bounded::max_value() }
            #[inline(always)] fn max_identity() -> Self { Bounded::min_value() }
            #[inline(always)] fn to_bits(self) -> u64 { self as u64 & (u64::MAX >> (64 - 8 * core::mem::size_of::<$t>())) }
            #[inline(always)] fn from_bits(bits: u64) -> Self { bits as $t }
            #[inline(always)] fn as_f64(self) -> f64 { self as f64 }
            #[inline(always)] fn order_key(self) -> u64 { self.wrapping_sub(<$t>::MIN).to_bits() }
        }
        impl IntElement for $t {}
    )*};
}
int_element!(u8 => U8, u16 => U16, u32 => U32, i32 => I32, u64 => U64, i64 => I64);

/// Float `min`/`max`, both IEEE minNum/maxNum. `native`: the standard library's, which PTX has as
/// one instruction for `f32`. `select`: a compare and a select, for `f64`, where PTX `max.f64`
/// becomes seven SASS instructions on sm_90 (register moves and a NaN quieting) and this four;
/// a tie keeps the earlier operand, and of two NaNs the later one is kept as it is.
macro_rules! float_min_max {
    (native, $t:ty) => {
        #[inline(always)]
        fn min(a: Self, b: Self) -> Self {
            <$t>::min(a, b)
        }
        #[inline(always)]
        fn max(a: Self, b: Self) -> Self {
            <$t>::max(a, b)
        }
    };
    (select, $t:ty) => {
        #[inline(always)]
        fn min(a: Self, b: Self) -> Self {
            if b < a || a.is_nan() {
                b
            } else {
                a
            }
        }
        #[inline(always)]
        fn max(a: Self, b: Self) -> Self {
            if b > a || a.is_nan() {
                b
            } else {
                a
            }
        }
    };
}

macro_rules! float_element {
    ($($t:ty => $e:ident, $bits:ty, $minmax:ident),*) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const TYPE: ElemType = ElemType::$e;
            #[inline(always)] fn add(a: Self, b: Self) -> Self { a + b }
            #[inline(always)] fn mul(a: Self, b: Self) -> Self { a * b }
            float_min_max!($minmax, $t);
            #[inline(always)] fn zero() -> Self { 0.0 }
            #[inline(always)] fn one() -> Self { 1.0 }
            #[inline(always)] fn min_identity() -> Self { <$t>::INFINITY }
            #[inline(always)] fn max_identity() -> Self { <$t>::NEG_INFINITY }
            #[inline(always)] fn to_bits(self) -> u64 { <$t>::to_bits(self) as u64 }
            #[inline(always)] fn from_bits(bits: u64) -> Self { <$t>::from_bits(bits as $bits) }
            #[inline(always)] fn as_f64(self) -> f64 { self as f64 }
            #[inline(always)] fn order_key(self) -> u64 {
                const SIGN: $bits = 1 << (<$bits>::BITS - 1);
                let b = <$t>::to_bits(self);
                (if self.is_nan() { <$bits>::MAX } else if b & SIGN != 0 { !b } else { b | SIGN }) as u64
            }
        }
    )*};
}
float_element!(f32 => F32, u32, native, f64 => F64, u64, select);
