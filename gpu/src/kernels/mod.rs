//! Kernel entry points, one file per device-wide strategy. Each file holds the generic kernel
//! body and a macro that stamps out one `extern "ptx-kernel"` function per (element type,
//! operator), named `<strategy>_<type>_<op>` (see `scan_abi::names`).

pub mod hierarchical;
pub mod naive;
pub mod single_pass;
pub mod trace;

/// The architecture the tuning table is read for (the PTX builder compiles for one target).
pub const ARCH: u32 = scan_abi::tuning::DEFAULT_ARCH;

/// Calls `$m!(type, [operators])` for every element type with the operators it supports
/// (`scan_abi::Op::supports`).
macro_rules! for_each_type {
    ($m:ident) => {
        $m!(u8, [Add, Mul, Min, Max, And, Or, Xor]);
        $m!(u16, [Add, Mul, Min, Max, And, Or, Xor]);
        $m!(u32, [Add, Mul, Min, Max, And, Or, Xor]);
        $m!(i32, [Add, Mul, Min, Max, And, Or, Xor]);
        $m!(u64, [Add, Mul, Min, Max, And, Or, Xor, Affine]);
        $m!(i64, [Add, Mul, Min, Max, And, Or, Xor]);
        $m!(f32, [Add, Mul, Min, Max]);
        $m!(f64, [Add, Mul, Min, Max]);
    };
}
pub(crate) use for_each_type;

/// Decoded `flags` argument (`scan_abi::flags`).
#[derive(Clone, Copy)]
pub struct Mode {
    pub exclusive: bool,
    pub has_init: bool,
    pub acq_rel_status: bool,
}

impl Mode {
    #[inline(always)]
    pub fn from_flags(flags: u32) -> Mode {
        Mode {
            exclusive: flags & scan_abi::flags::EXCLUSIVE != 0,
            has_init: flags & scan_abi::flags::HAS_INIT != 0,
            acq_rel_status: flags & scan_abi::flags::ACQ_REL_STATUS != 0,
        }
    }
}

/// Scans `items` in place (inclusive or exclusive) after `prefix`, left to right.
#[inline(always)]
pub fn rescan<T: Copy, O: crate::op::ScanOp<T>>(items: &mut [T], prefix: Option<T>, exclusive: bool) {
    let mut running = prefix;
    for x in items.iter_mut() {
        let next = crate::op::combine_after::<T, O>(running, *x);
        *x = if exclusive { running.unwrap_or(O::identity()) } else { next };
        running = Some(next);
    }
}
