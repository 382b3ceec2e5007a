//! The naive O(n²) scan: thread `i` combines its whole prefix by itself. A teaching baseline: no
//! cooperation, no shared memory, n²/2 reads.

use crate::arch::{block_dim, block_idx, thread_idx};
use crate::kernels::{for_each_type, Mode};
use crate::op::{combine_after, ScanOp};

#[inline(always)]
pub unsafe fn naive<T: Copy, O: ScanOp<T>>(inp: *const T, out: *mut T, n: u64, init: T, flags: u32) {
    let mode = Mode::from_flags(flags);
    let i = block_idx() as u64 * block_dim() as u64 + thread_idx() as u64;
    if i >= n {
        return;
    }
    let end = if mode.exclusive { i } else { i + 1 };
    let mut acc = if mode.has_init { Some(init) } else { None };
    for j in 0..end {
        acc = Some(combine_after::<T, O>(acc, *inp.add(j as usize)));
    }
    *out.add(i as usize) = acc.unwrap_or(O::identity());
}

macro_rules! naive_kernels {
    ($t:ident, [$($op:ident),*]) => { paste::paste! { $(
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn [<naive_ $t _ $op:lower>](
            inp: *const $t, out: *mut $t, n: u64, init: $t, flags: u32,
        ) {
            naive::<$t, crate::op::$op>(inp, out, n, init, flags)
        }
    )* } };
}
for_each_type!(naive_kernels);
