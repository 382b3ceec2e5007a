//! Scan operators: an identity and an associative `combine`.
//!
//! `combine(a, b)` always receives the earlier (lower-index) operand first, in every kernel and in
//! the CPU reference, so operators need not be commutative ([`Affine`] is not).

use crate::element::{ElemType, Element, IntElement};

/// The operators the kernels are compiled for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Op {
    Add,
    Mul,
    Min,
    Max,
    And,
    Or,
    Xor,
    Affine,
}

impl Op {
    pub const ALL: [Op; 8] = [Op::Add, Op::Mul, Op::Min, Op::Max, Op::And, Op::Or, Op::Xor, Op::Affine];

    pub const fn name(self) -> &'static str {
        match self {
            Op::Add => "add",
            Op::Mul => "mul",
            Op::Min => "min",
            Op::Max => "max",
            Op::And => "and",
            Op::Or => "or",
            Op::Xor => "xor",
            Op::Affine => "affine",
        }
    }

    pub const fn describe(self) -> &'static str {
        match self {
            Op::Add => "sum (integers wrap around)",
            Op::Mul => "product (integers wrap around)",
            Op::Min => "minimum (floats: IEEE minNum, a NaN operand is ignored)",
            Op::Max => "maximum (floats: IEEE maxNum, a NaN operand is ignored)",
            Op::And => "bitwise and (integers only)",
            Op::Or => "bitwise or (integers only)",
            Op::Xor => "bitwise xor (integers only)",
            Op::Affine => {
                "composition of affine maps x -> a*x + b mod 2^32, packed in a u64 as a | b << 32 \
                 (u64 only; not commutative)"
            }
        }
    }

    pub fn parse(s: &str) -> Option<Op> {
        Op::ALL.into_iter().find(|o| o.name() == s)
    }

    /// Whether kernels exist for this operator on `ty`.
    pub const fn supports(self, ty: ElemType) -> bool {
        match self {
            Op::Add | Op::Mul | Op::Min | Op::Max => true,
            Op::And | Op::Or | Op::Xor => !ty.is_float(),
            Op::Affine => matches!(ty, ElemType::U64),
        }
    }

    /// Whether the result depends on how the combines are grouped (float sums and products
    /// round differently in different orders). Only these need the deterministic single-pass
    /// kernels; every other scan is exact whatever the order.
    pub const fn order_sensitive(self, ty: ElemType) -> bool {
        ty.is_float() && matches!(self, Op::Add | Op::Mul)
    }
}

/// An associative operator with an identity, over elements of type `T`.
pub trait ScanOp<T>: Copy + Default + Send + Sync + 'static {
    /// Whether `combine(a, b) == combine(b, a)`: a reduction may then take its operands in any
    /// order (floats up to rounding).
    const COMMUTATIVE: bool = false;
    /// Whether `combine(a, a) == a` (min, max, and, or): a warp scan may then combine a lane's
    /// own value again where no earlier lane exists, so its steps need no lane guard.
    const IDEMPOTENT: bool = false;
    fn identity() -> T;
    /// `a` is the earlier operand.
    fn combine(a: T, b: T) -> T;
}

macro_rules! op {
    ($name:ident, $bound:ident, $id:expr, |$a:ident, $b:ident| $body:expr) => {
        op!($name, $bound, false, $id, |$a, $b| $body);
    };
    ($name:ident, $bound:ident, $idempotent:expr, $id:expr, |$a:ident, $b:ident| $body:expr) => {
        #[derive(Clone, Copy, Debug, Default)]
        pub struct $name;
        impl<T: $bound> ScanOp<T> for $name {
            const COMMUTATIVE: bool = true;
            const IDEMPOTENT: bool = $idempotent;
            #[inline(always)]
            fn identity() -> T {
                $id
            }
            #[inline(always)]
            fn combine($a: T, $b: T) -> T {
                $body
            }
        }
    };
}

op!(Add, Element, T::zero(), |a, b| T::add(a, b));
op!(Mul, Element, T::one(), |a, b| T::mul(a, b));
op!(Min, Element, true, T::min_identity(), |a, b| T::min(a, b));
op!(Max, Element, true, T::max_identity(), |a, b| T::max(a, b));
op!(And, IntElement, true, !<T as Element>::zero(), |a, b| a & b);
op!(Or, IntElement, true, <T as Element>::zero(), |a, b| a | b);
op!(Xor, IntElement, <T as Element>::zero(), |a, b| a ^ b);

/// Composition of affine maps over u32, packed as `a | b << 32` for `x -> a*x + b`.
/// `combine(f, g)` is "f, then g": `x -> g.a*(f.a*x + f.b) + g.b`.
#[derive(Clone, Copy, Debug, Default)]
pub struct Affine;

impl Affine {
    #[inline(always)]
    pub const fn pack(a: u32, b: u32) -> u64 {
        a as u64 | (b as u64) << 32
    }
}

impl ScanOp<u64> for Affine {
    #[inline(always)]
    fn identity() -> u64 {
        Affine::pack(1, 0)
    }
    #[inline(always)]
    fn combine(f: u64, g: u64) -> u64 {
        let (fa, fb) = (f as u32, (f >> 32) as u32);
        let (ga, gb) = (g as u32, (g >> 32) as u32);
        Affine::pack(fa.wrapping_mul(ga), ga.wrapping_mul(fb).wrapping_add(gb))
    }
}

/// Composition of affine maps `x -> a*x + b` over f32, packed as `a | b << 32` (their bits):
/// the operator of the linear recurrence `x[t] = a[t]*x[t-1] + b[t]`. `combine(f, g)` is "f, then
/// g", as for [`Affine`]. Float rounding makes it associative only approximately, like float
/// addition.
#[derive(Clone, Copy, Debug, Default)]
pub struct AffineF32;

impl AffineF32 {
    #[inline(always)]
    pub fn pack(a: f32, b: f32) -> u64 {
        a.to_bits() as u64 | (b.to_bits() as u64) << 32
    }

    #[inline(always)]
    pub fn unpack(m: u64) -> (f32, f32) {
        (f32::from_bits(m as u32), f32::from_bits((m >> 32) as u32))
    }
}

impl ScanOp<u64> for AffineF32 {
    #[inline(always)]
    fn identity() -> u64 {
        AffineF32::pack(1.0, 0.0)
    }
    #[inline(always)]
    fn combine(f: u64, g: u64) -> u64 {
        let ((fa, fb), (ga, gb)) = (AffineF32::unpack(f), AffineF32::unpack(g));
        AffineF32::pack(fa * ga, ga * fb + gb)
    }
}

/// Composition of affine maps `x -> a*x + b` over f64, as `[a, b]`: the f64 linear recurrence's
/// operator (see [`AffineF32`]).
#[derive(Clone, Copy, Debug, Default)]
pub struct AffineF64;

impl ScanOp<[f64; 2]> for AffineF64 {
    #[inline(always)]
    fn identity() -> [f64; 2] {
        [1.0, 0.0]
    }
    #[inline(always)]
    fn combine(f: [f64; 2], g: [f64; 2]) -> [f64; 2] {
        [f[0] * g[0], g[0] * f[1] + g[1]]
    }
}
