//! One-block scans that record the shared array after every round, for `scan --trace`: the
//! states printed are the kernel's own, read back from the GPU.

use crate::arch::{block_dim, thread_idx};
use crate::block::{
    Blelloch, BlellochNoPad, BlockScan, BrentKung, GlobalTrace, KoggeStone, KoggeStoneInPlace, KoggeStoneRacy,
};
use crate::kernels::for_each_type;
use crate::op::{combine_after, ScanOp};
use crate::smem::Carver;

/// One thread per element (`block_dim()` elements). `states`/`meta` receive the rounds (see
/// [`GlobalTrace`]), `rounds[0]` their number; `out[t]` the exclusive and `out[m + t]` the
/// inclusive result.
#[inline(always)]
pub unsafe fn trace<T: Copy, O: ScanOp<T>, B: BlockScan>(
    inp: *const T,
    out: *mut T,
    states: *mut T,
    meta: *mut u32,
    rounds: *mut u32,
) {
    let (t, m) = (thread_idx(), block_dim());
    let mut smem = Carver::new();
    let scratch = smem.take::<T>(B::ALGO.smem_elems(m));
    smem.check();
    let x = *inp.add(t as usize);
    let mut tracer = GlobalTrace { states, meta, width: B::ALGO.trace_width(m), rounds: 0 };
    let (before, _) = B::scan::<T, O, _>(x, scratch, &mut tracer);
    *out.add(t as usize) = before.unwrap_or(O::identity());
    *out.add((m + t) as usize) = combine_after::<T, O>(before, x);
    if t == 0 {
        *rounds = tracer.rounds;
    }
}

macro_rules! trace_kernels {
    ($t:ident, [$($op:ident),*]) => { paste::paste! { $(
        trace_kernels!(@one $t, $op, ks, KoggeStone);
        trace_kernels!(@one $t, $op, ksinplace, KoggeStoneInPlace);
        trace_kernels!(@one $t, $op, ksracy, KoggeStoneRacy);
        trace_kernels!(@one $t, $op, blelloch, Blelloch);
        trace_kernels!(@one $t, $op, blellochnopad, BlellochNoPad);
        trace_kernels!(@one $t, $op, brentkung, BrentKung);
    )* } };
    (@one $t:ident, $op:ident, $token:ident, $algo:ident) => { paste::paste! {
        #[no_mangle]
        pub unsafe extern "ptx-kernel" fn [<trace_ $token _ $t _ $op:lower>](
            inp: *const $t, out: *mut $t, states: *mut $t, meta: *mut u32, rounds: *mut u32,
        ) {
            trace::<$t, crate::op::$op, $algo>(inp, out, states, meta, rounds)
        }
    } };
}
for_each_type!(trace_kernels);
