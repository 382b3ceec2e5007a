//! The element types a widening scan reads, and the wider types each one scans into.
//!
//! A widening scan reads narrow elements, converts each one as Rust's `as` does (integers sign-
//! or zero-extended by their own signedness, half floats exactly), and scans in the wide type:
//! sums of bytes that would overflow a byte, at the narrow type's read traffic.

use crate::element::ElemType;

/// A widening scan's input type.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Source {
    U8,
    I8,
    U16,
    I16,
    U32,
    I32,
    /// IEEE binary16.
    F16,
    /// bfloat16: the upper half of an `f32`.
    Bf16,
}

impl Source {
    pub const ALL: [Source; 8] =
        [Source::U8, Source::I8, Source::U16, Source::I16, Source::U32, Source::I32, Source::F16, Source::Bf16];

    pub const fn name(self) -> &'static str {
        match self {
            Source::U8 => "u8",
            Source::I8 => "i8",
            Source::U16 => "u16",
            Source::I16 => "i16",
            Source::U32 => "u32",
            Source::I32 => "i32",
            Source::F16 => "f16",
            Source::Bf16 => "bf16",
        }
    }

    pub const fn size(self) -> usize {
        match self {
            Source::U8 | Source::I8 => 1,
            Source::U16 | Source::I16 | Source::F16 | Source::Bf16 => 2,
            Source::U32 | Source::I32 => 4,
        }
    }

    pub const fn is_float(self) -> bool {
        matches!(self, Source::F16 | Source::Bf16)
    }

    /// Whether a widening scan from this type into `out` exists: 1- and 2-byte integers into
    /// u32, u64 and i64; 4-byte integers into u64 and i64; half floats into f32.
    pub const fn widens_to(self, out: ElemType) -> bool {
        match self {
            Source::U8 | Source::I8 | Source::U16 | Source::I16 => {
                matches!(out, ElemType::U32 | ElemType::U64 | ElemType::I64)
            }
            Source::U32 | Source::I32 => matches!(out, ElemType::U64 | ElemType::I64),
            Source::F16 | Source::Bf16 => matches!(out, ElemType::F32),
        }
    }

    pub fn parse(s: &str) -> Option<Source> {
        Source::ALL.into_iter().find(|t| t.name() == s)
    }
}
