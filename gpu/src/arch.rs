//! The only module that touches the target: special registers, barriers, warp shuffles and
//! votes, dynamic shared memory, memory fences, scoped loads and stores, atomics and vector
//! memory access. Everything above it reads like ordinary Rust. (The role `cuda_std` plays in
//! Rust-CUDA.)
//!
//! Kernels use 1-D blocks and grids only. Scoped accesses use generic addresses, so they are
//! valid for any pointer the host passes.

use core::arch::asm;
use core::arch::nvptx;
use core::mem::size_of;

/// Lanes per warp.
pub const WARP: u32 = 32;
const FULL_MASK: u32 = 0xffff_ffff;

// ---------------------------------------------------------------------------------------------
// Indices and barriers

#[inline(always)]
pub fn thread_idx() -> u32 {
    unsafe { nvptx::_thread_idx_x() as u32 }
}

#[inline(always)]
pub fn block_idx() -> u32 {
    unsafe { nvptx::_block_idx_x() as u32 }
}

#[inline(always)]
pub fn block_dim() -> u32 {
    unsafe { nvptx::_block_dim_x() as u32 }
}

#[inline(always)]
pub fn grid_dim() -> u32 {
    unsafe { nvptx::_grid_dim_x() as u32 }
}

#[inline(always)]
pub fn lane() -> u32 {
    thread_idx() % WARP
}

#[inline(always)]
pub fn warp_idx() -> u32 {
    thread_idx() / WARP
}

/// Barrier for all threads of the block; also orders their shared-memory accesses.
#[inline(always)]
pub fn sync_threads() {
    unsafe { nvptx::_syncthreads() }
}

/// [`sync_threads`] that also tells every thread whether `pred` held on any thread of the block.
#[inline(always)]
pub fn sync_threads_any(pred: bool) -> bool {
    let r: u32;
    unsafe {
        asm!(
            "{{ .reg .pred p, q; setp.ne.u32 p, {v}, 0; bar.red.or.pred q, 0, p; selp.u32 {r}, 1, 0, q; }}",
            r = out(reg32) r,
            v = in(reg32) pred as u32,
        );
    }
    r != 0
}

/// Barrier for the 32 lanes of the warp; also orders their shared-memory accesses.
#[inline(always)]
pub fn sync_warp() {
    unsafe { asm!("bar.warp.sync {m};", m = in(reg32) FULL_MASK) }
}

/// The GPU's global nanosecond clock (`%globaltimer`), comparable across SMs.
#[inline(always)]
pub fn global_timer() -> u64 {
    let t: u64;
    unsafe { asm!("mov.u64 {t}, %globaltimer;", t = out(reg64) t) };
    t
}

/// The SM this thread runs on.
#[inline(always)]
pub fn sm_id() -> u32 {
    let s: u32;
    unsafe { asm!("mov.u32 {s}, %smid;", s = out(reg32) s, options(nomem, nostack)) };
    s
}

/// Aborts the kernel; the host sees a launch failure.
#[inline(always)]
pub fn trap() -> ! {
    unsafe { nvptx::trap() }
}

// ---------------------------------------------------------------------------------------------
// Warp shuffles and votes

#[allow(improper_ctypes)]
extern "C" {
    #[link_name = "llvm.nvvm.shfl.sync.up.i32"]
    fn shfl_up_i32(mask: u32, value: i32, delta: u32, clamp: u32) -> i32;
    #[link_name = "llvm.nvvm.shfl.sync.down.i32"]
    fn shfl_down_i32(mask: u32, value: i32, delta: u32, clamp: u32) -> i32;
    #[link_name = "llvm.nvvm.shfl.sync.bfly.i32"]
    fn shfl_bfly_i32(mask: u32, value: i32, lane_mask: u32, clamp: u32) -> i32;
    #[link_name = "llvm.nvvm.shfl.sync.idx.i32"]
    fn shfl_idx_i32(mask: u32, value: i32, src_lane: u32, clamp: u32) -> i32;
}

/// Applies `f` to each 32-bit word of `v` (values up to 32 bytes: the narrow-column scan's rows),
/// for shuffling any `Copy` type.
#[inline(always)]
fn per_word<T: Copy>(v: T, mut f: impl FnMut(u32) -> u32) -> T {
    const { assert!(size_of::<T>() <= 32) };
    let mut words = [0u32; 8];
    unsafe {
        core::ptr::copy_nonoverlapping(&v as *const T as *const u8, words.as_mut_ptr() as *mut u8, size_of::<T>());
    }
    for w in words.iter_mut().take(size_of::<T>().div_ceil(4)) {
        *w = f(*w);
    }
    unsafe { core::ptr::read_unaligned(words.as_ptr() as *const T) }
}

/// The value of lane `lane - delta`, or this lane's own value when `lane < delta`.
/// All 32 lanes must call it together.
#[inline(always)]
pub fn shfl_up<T: Copy>(v: T, delta: u32) -> T {
    per_word(v, |w| unsafe { shfl_up_i32(FULL_MASK, w as i32, delta, 0) as u32 })
}

/// The value of lane `lane + delta`, or this lane's own value past lane 31.
#[inline(always)]
pub fn shfl_down<T: Copy>(v: T, delta: u32) -> T {
    per_word(v, |w| unsafe { shfl_down_i32(FULL_MASK, w as i32, delta, 0x1f) as u32 })
}

/// The value of lane `lane ^ mask`.
#[inline(always)]
pub fn shfl_xor<T: Copy>(v: T, mask: u32) -> T {
    per_word(v, |w| unsafe { shfl_bfly_i32(FULL_MASK, w as i32, mask, 0x1f) as u32 })
}

/// The value of lane `src`.
#[inline(always)]
pub fn shfl_idx<T: Copy>(v: T, src: u32) -> T {
    per_word(v, |w| unsafe { shfl_idx_i32(FULL_MASK, w as i32, src, 0x1f) as u32 })
}

/// Bit `i` is set when lane `i`'s predicate holds. All 32 lanes must call it together.
#[inline(always)]
pub fn ballot(pred: bool) -> u32 {
    let r: u32;
    unsafe {
        asm!(
            "{{ .reg .pred p; setp.ne.u32 p, {v}, 0; vote.sync.ballot.b32 {r}, p, {m}; }}",
            r = out(reg32) r,
            v = in(reg32) pred as u32,
            m = in(reg32) FULL_MASK,
        );
    }
    r
}

/// `peers` less the lanes whose `value` differs from this lane's in bit `bit` (a one-bit mask):
/// the bit test, the ballot and the complement in one PTX block, as CUB writes its digit match.
/// ptxas turns a key's eight of them into three instructions a bit after one `R2P` moves the
/// digit into predicates, where the same steps in Rust took six a bit. All 32 lanes must call it
/// together.
#[inline(always)]
pub fn ballot_agree(peers: u32, value: u32, bit: u32) -> u32 {
    let r: u32;
    unsafe {
        asm!(
            "{{ .reg .pred p; .reg .b32 m; and.b32 m, {v}, {b}; setp.ne.u32 p, m, 0; \
             vote.sync.ballot.b32 m, p, {full}; @!p not.b32 m, m; and.b32 {r}, {peers}, m; }}",
            r = out(reg32) r,
            peers = in(reg32) peers,
            v = in(reg32) value,
            b = in(reg32) bit,
            full = in(reg32) FULL_MASK,
        );
    }
    r
}

/// True when the predicate holds on every lane.
#[inline(always)]
pub fn all_lanes(pred: bool) -> bool {
    ballot(pred) == FULL_MASK
}

/// `x`, through an instruction LLVM can neither see into nor move: values computed from the
/// result are not recognised as equal to the same computation on `x` (so they are recomputed
/// where used instead of being kept in registers across everything in between), and the value
/// is made where it is written, not sunk into later branches.
#[inline(always)]
pub fn opaque_u32(x: u32) -> u32 {
    let r: u32;
    unsafe { asm!("mov.b32 {r}, {x};", r = out(reg32) r, x = in(reg32) x, options(nomem, nostack)) };
    r
}

// ---------------------------------------------------------------------------------------------
// Byte arithmetic on packed words

/// `c` plus the dot product of the four unsigned bytes of `a` with those of `b` (`dp4a`): with
/// `b` a mask of ones, the sum of the chosen bytes of `a` in one instruction.
#[inline(always)]
pub fn dp4a(a: u32, b: u32, c: u32) -> u32 {
    let r: u32;
    unsafe {
        asm!("dp4a.u32.u32 {r}, {a}, {b}, {c};", r = out(reg32) r, a = in(reg32) a, b = in(reg32) b, c = in(reg32) c, options(pure, nomem, nostack))
    };
    r
}

/// Byte `k` of the result is byte `sel >> 4k & 7` of the eight bytes `b:a` (`prmt`).
#[inline(always)]
pub fn prmt(a: u32, b: u32, sel: u32) -> u32 {
    let r: u32;
    unsafe {
        asm!("prmt.b32 {r}, {a}, {b}, {s};", r = out(reg32) r, a = in(reg32) a, b = in(reg32) b, s = in(reg32) sel, options(pure, nomem, nostack))
    };
    r
}

/// The low bytes of four words, packed in order from the lowest.
#[inline(always)]
pub fn pack_low_bytes(b0: u32, b1: u32, b2: u32, b3: u32) -> u32 {
    prmt(prmt(b0, b1, 0x0040), prmt(b2, b3, 0x0040), 0x5410)
}

/// Byte `k` (0..4) of `w`, zero-extended.
#[inline(always)]
pub fn byte_of(w: u32, k: u32) -> u32 {
    prmt(w, 0, 0x4440 | k)
}

// ---------------------------------------------------------------------------------------------
// Shared memory

#[repr(C, align(16))]
struct Align16([u8; 16]);

/// The block's dynamic shared memory (sized by the launch), 16-byte aligned.
#[inline(always)]
pub fn dynamic_smem() -> *mut u8 {
    core::intrinsics::gpu::gpu_launch_sized_workgroup_mem::<Align16>() as *mut u8
}

/// Bytes of dynamic shared memory this launch provides.
#[inline(always)]
pub fn dynamic_smem_bytes() -> u32 {
    let r: u32;
    unsafe { asm!("mov.u32 {r}, %dynamic_smem_size;", r = out(reg32) r) };
    r
}

// ---------------------------------------------------------------------------------------------
// Fences, scoped loads and stores, atomics

/// Orders this thread's earlier memory accesses before its later ones for the whole GPU.
#[inline(always)]
pub fn fence_gpu() {
    unsafe { asm!("fence.acq_rel.gpu;") };
}

/// Sleeps about `ns` nanoseconds (back-off while spinning).
#[inline(always)]
pub fn nanosleep(ns: u32) {
    unsafe { asm!("nanosleep.u32 {t};", t = in(reg32) ns) };
}

/// 8-byte load with acquire semantics at GPU scope.
#[inline(always)]
pub unsafe fn load_acquire_u64(p: *const u64) -> u64 {
    let r: u64;
    asm!("ld.acquire.gpu.u64 {r}, [{p}];", r = out(reg64) r, p = in(reg64) p);
    r
}

/// 8-byte store with release semantics at GPU scope.
#[inline(always)]
pub unsafe fn store_release_u64(p: *mut u64, v: u64) {
    asm!("st.release.gpu.u64 [{p}], {v};", p = in(reg64) p, v = in(reg64) v);
}

/// 8-byte load with relaxed semantics at GPU scope (atomic, unordered).
#[inline(always)]
pub unsafe fn load_relaxed_u64(p: *const u64) -> u64 {
    let r: u64;
    asm!("ld.relaxed.gpu.u64 {r}, [{p}];", r = out(reg64) r, p = in(reg64) p);
    r
}

/// 8-byte store with relaxed semantics at GPU scope (atomic, unordered).
#[inline(always)]
pub unsafe fn store_relaxed_u64(p: *mut u64, v: u64) {
    asm!("st.relaxed.gpu.u64 [{p}], {v};", p = in(reg64) p, v = in(reg64) v);
}

/// Single-copy-atomic 16-byte load with acquire semantics at GPU scope (`p` 16-byte aligned).
/// Returns (low 8 bytes, high 8 bytes).
#[inline(always)]
pub unsafe fn load_acquire_u128(p: *const [u64; 2]) -> (u64, u64) {
    let (lo, hi): (u64, u64);
    asm!(
        "{{ .reg .b128 q; ld.acquire.gpu.b128 q, [{p}]; mov.b128 {{{lo}, {hi}}}, q; }}",
        lo = out(reg64) lo,
        hi = out(reg64) hi,
        p = in(reg64) p,
    );
    (lo, hi)
}

/// Single-copy-atomic 16-byte store with release semantics at GPU scope (`p` 16-byte aligned).
#[inline(always)]
pub unsafe fn store_release_u128(p: *mut [u64; 2], lo: u64, hi: u64) {
    asm!(
        "{{ .reg .b128 q; mov.b128 q, {{{lo}, {hi}}}; st.release.gpu.b128 [{p}], q; }}",
        lo = in(reg64) lo,
        hi = in(reg64) hi,
        p = in(reg64) p,
    );
}

/// Single-copy-atomic 16-byte load with relaxed semantics at GPU scope (`p` 16-byte aligned).
#[inline(always)]
pub unsafe fn load_relaxed_u128(p: *const [u64; 2]) -> (u64, u64) {
    let (lo, hi): (u64, u64);
    asm!(
        "{{ .reg .b128 q; ld.relaxed.gpu.b128 q, [{p}]; mov.b128 {{{lo}, {hi}}}, q; }}",
        lo = out(reg64) lo,
        hi = out(reg64) hi,
        p = in(reg64) p,
    );
    (lo, hi)
}

/// Single-copy-atomic 16-byte store with relaxed semantics at GPU scope (`p` 16-byte aligned).
#[inline(always)]
pub unsafe fn store_relaxed_u128(p: *mut [u64; 2], lo: u64, hi: u64) {
    asm!(
        "{{ .reg .b128 q; mov.b128 q, {{{lo}, {hi}}}; st.relaxed.gpu.b128 [{p}], q; }}",
        lo = in(reg64) lo,
        hi = in(reg64) hi,
        p = in(reg64) p,
    );
}

/// Atomic add to a counter in shared memory (`p` a generic pointer into it); returns the old
/// value. The address is converted to the shared window first: on a generic address ptxas
/// emits the generic `ATOM.E` instead of the shared-memory `ATOMS` (for the sort's ranking OR
/// the two are as fast; the digit counting needs the shared form to take
/// 32-bit addresses, see [`shared_window`]).
#[inline(always)]
pub unsafe fn atomic_add_shared_u32(p: *mut u32, v: u32) -> u32 {
    let r: u32;
    asm!(
        "{{ .reg .u64 s; cvta.to.shared.u64 s, {p}; atom.shared.add.u32 {r}, [s], {v}; }}",
        r = out(reg32) r,
        p = in(reg64) p,
        v = in(reg32) v
    );
    r
}

/// Atomic OR into a bit mask in shared memory (`p` a generic pointer into it), result unused;
/// shared-window addressing as [`atomic_add_shared_u32`].
#[inline(always)]
pub unsafe fn atomic_or_shared_u32(p: *mut u32, v: u32) {
    asm!("{{ .reg .u64 s; cvta.to.shared.u64 s, {p}; red.shared.or.b32 [s], {v}; }}", p = in(reg64) p, v = in(reg32) v);
}

/// The shared-window address (32 bits) of `p`, a generic pointer into shared memory: for
/// atomics in a hot loop, where 32-bit address arithmetic is half the instructions of 64-bit.
#[inline(always)]
pub fn shared_window(p: *const u8) -> u32 {
    let r: u32;
    unsafe {
        asm!("{{ .reg .u64 s; cvta.to.shared.u64 s, {p}; cvt.u32.u64 {r}, s; }}", r = out(reg32) r, p = in(reg64) p, options(pure, nomem, nostack))
    };
    r
}

/// Atomic add, result unused, to the shared-memory word at shared-window address `addr`
/// ([`shared_window`]).
#[inline(always)]
pub unsafe fn red_add_shared_u32(addr: u32, v: u32) {
    asm!("red.shared.add.u32 [{a}], {v};", a = in(reg32) addr, v = in(reg32) v);
}

/// Atomic add at GPU scope (relaxed); returns the old value.
#[inline(always)]
pub unsafe fn atomic_add_u32(p: *mut u32, v: u32) -> u32 {
    let r: u32;
    asm!("atom.relaxed.gpu.add.u32 {r}, [{p}], {v};", r = out(reg32) r, p = in(reg64) p, v = in(reg32) v);
    r
}

/// Atomic add at GPU scope (relaxed); returns the old value.
#[inline(always)]
pub unsafe fn atomic_add_u64(p: *mut u64, v: u64) -> u64 {
    let r: u64;
    asm!("atom.relaxed.gpu.add.u64 {r}, [{p}], {v};", r = out(reg64) r, p = in(reg64) p, v = in(reg64) v);
    r
}

/// Atomic exchange at GPU scope (relaxed); returns the old value.
#[inline(always)]
pub unsafe fn atomic_exch_u64(p: *mut u64, v: u64) -> u64 {
    let r: u64;
    asm!("atom.relaxed.gpu.exch.b64 {r}, [{p}], {v};", r = out(reg64) r, p = in(reg64) p, v = in(reg64) v);
    r
}

/// Atomic compare-and-swap at GPU scope (relaxed); returns the old value.
#[inline(always)]
pub unsafe fn atomic_cas_u64(p: *mut u64, expected: u64, new: u64) -> u64 {
    let r: u64;
    asm!(
        "atom.relaxed.gpu.cas.b64 {r}, [{p}], {e}, {n};",
        r = out(reg64) r,
        p = in(reg64) p,
        e = in(reg64) expected,
        n = in(reg64) new,
    );
    r
}

// ---------------------------------------------------------------------------------------------
// Asynchronous copies into shared memory (sm_80+)

/// Starts copying 16 bytes from global `src` to shared `dst` (both 16-byte aligned; `dst` a
/// generic pointer into shared memory) without passing through registers; L2 only (`.cg`).
#[inline(always)]
pub unsafe fn cp_async_16(dst: *mut u8, src: *const u8) {
    asm!(
        "{{ .reg .u64 s; cvta.to.shared.u64 s, {d}; cp.async.cg.shared.global [s], [{g}], 16; }}",
        d = in(reg64) dst,
        g = in(reg64) src,
    );
}

/// Asks for the 128-byte line holding `p` (global) to be brought into L2, holding no register
/// for it: a later load then waits on L2 rather than on memory.
#[inline(always)]
pub unsafe fn prefetch_l2(p: *const u8) {
    asm!("prefetch.global.L2 [{p}];", p = in(reg64) p);
}

/// Asks the bulk-copy engine to bring `bytes` bytes from global `p` into L2 (`p` 16-byte aligned,
/// `bytes` a multiple of 16): one instruction for a whole tile, holding no register or load slot.
#[inline(always)]
pub unsafe fn prefetch_l2_bulk(p: *const u8, bytes: u32) {
    asm!("cp.async.bulk.prefetch.L2.global [{p}], {b};", p = in(reg64) p, b = in(reg32) bytes);
}

/// Waits until every [`cp_async_16`] this thread started has landed; the data is then visible
/// to this thread (other threads need a barrier as well).
#[inline(always)]
pub fn cp_async_wait_all() {
    unsafe { asm!("cp.async.wait_all;") }
}

// ---------------------------------------------------------------------------------------------
// Shared-memory barrier objects (mbarrier) and bulk copies into shared memory (sm_90)
//
// An mbarrier is an 8-byte word in shared memory that counts arrivals (and, for bulk copies,
// bytes) per phase; a phase completes when every expected arrival and byte has come, and waiters
// name the phase by its parity. Arrivals release and waits acquire at block scope, so what a
// thread wrote before arriving is visible to a thread that saw the phase complete.

/// Initializes the barrier at `bar` (shared memory) to expect `count` arrivals per phase.
#[inline(always)]
pub unsafe fn mbar_init(bar: *mut u64, count: u32) {
    asm!(
        "{{ .reg .u64 s; cvta.to.shared.u64 s, {b}; mbarrier.init.shared::cta.b64 [s], {c}; }}",
        b = in(reg64) bar,
        c = in(reg32) count,
    );
}

/// Makes barrier initializations visible to the bulk-copy engine (before the block's barrier
/// that publishes them to the other threads).
#[inline(always)]
pub fn mbar_init_fence() {
    unsafe { asm!("fence.mbarrier_init.release.cluster;") }
}

/// One arrival on `bar`.
#[inline(always)]
pub unsafe fn mbar_arrive(bar: *mut u64) {
    asm!(
        "{{ .reg .u64 s; .reg .b64 st; cvta.to.shared.u64 s, {b}; mbarrier.arrive.shared::cta.b64 st, [s]; }}",
        b = in(reg64) bar,
    );
}

/// One arrival on `bar` that also makes its current phase wait for `bytes` bytes of bulk copies.
#[inline(always)]
pub unsafe fn mbar_arrive_expect_bytes(bar: *mut u64, bytes: u32) {
    asm!(
        "{{ .reg .u64 s; .reg .b64 st; cvta.to.shared.u64 s, {b}; mbarrier.arrive.expect_tx.shared::cta.b64 st, [s], {n}; }}",
        b = in(reg64) bar,
        n = in(reg32) bytes,
    );
}

/// Waits until the phase of `bar` with parity `parity` has completed (a barrier starts in phase
/// 0; the phase before it, parity 1, counts as completed).
#[inline(always)]
pub unsafe fn mbar_wait(bar: *mut u64, parity: u32) {
    loop {
        let done: u32;
        asm!(
            "{{ .reg .u64 s; .reg .pred p; cvta.to.shared.u64 s, {b}; mbarrier.try_wait.parity.shared::cta.b64 p, [s], {q}; selp.u32 {d}, 1, 0, p; }}",
            b = in(reg64) bar,
            q = in(reg32) parity,
            d = out(reg32) done,
        );
        if done != 0 {
            return;
        }
    }
}

/// Has the bulk-copy engine copy `bytes` bytes (a multiple of 16) from global `src` to shared
/// `dst` (both 16-byte aligned), counting them on `bar` as they land.
#[inline(always)]
pub unsafe fn bulk_copy_to_shared(dst: *mut u8, src: *const u8, bytes: u32, bar: *mut u64) {
    asm!(
        "{{ .reg .u64 d, m; cvta.to.shared.u64 d, {dst}; cvta.to.shared.u64 m, {bar}; \
         cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [d], [{src}], {n}, [m]; }}",
        dst = in(reg64) dst,
        src = in(reg64) src,
        n = in(reg32) bytes,
        bar = in(reg64) bar,
    );
}

/// Has the bulk-copy engine copy `bytes` bytes (a multiple of 16) from shared `src` to global
/// `dst` (both 16-byte aligned), in this thread's next bulk group ([`bulk_commit`]).
#[inline(always)]
pub unsafe fn bulk_copy_to_global(dst: *mut u8, src: *const u8, bytes: u32) {
    asm!(
        "{{ .reg .u64 s; cvta.to.shared.u64 s, {src}; cp.async.bulk.global.shared::cta.bulk_group [{dst}], [s], {n}; }}",
        dst = in(reg64) dst,
        src = in(reg64) src,
        n = in(reg32) bytes,
    );
}

/// Closes this thread's bulk group of [`bulk_copy_to_global`] copies.
#[inline(always)]
pub fn bulk_commit() {
    unsafe { asm!("cp.async.bulk.commit_group;") }
}

/// Waits until none of this thread's bulk groups is still reading its shared memory (their
/// writes may still be on their way).
#[inline(always)]
pub fn bulk_wait_read_all() {
    unsafe { asm!("cp.async.bulk.wait_group.read 0;") }
}

/// Waits until all of this thread's bulk groups are complete, their writes done.
#[inline(always)]
pub fn bulk_wait_all() {
    unsafe { asm!("cp.async.bulk.wait_group 0;") }
}

/// Orders this thread's earlier shared-memory accesses before later bulk copies into shared
/// memory (the copies go through another proxy than ordinary loads and stores).
#[inline(always)]
pub fn fence_proxy_async_shared() {
    unsafe { asm!("fence.proxy.async.shared::cta;") }
}

/// Barrier `id` (1..16; 0 is [`sync_threads`]) for the `threads` threads (a multiple of 32, whole
/// warps) that reach it: a barrier for a group of warps within the block.
#[inline(always)]
pub fn sync_group(id: u32, threads: u32) {
    unsafe { asm!("barrier.sync.aligned {i}, {n};", i = in(reg32) id, n = in(reg32) threads) }
}

// ---------------------------------------------------------------------------------------------
// Vector memory access

/// `V` elements filling 16 aligned bytes, read or written as one 16-byte access.
#[repr(C, align(16))]
#[derive(Clone, Copy)]
pub struct Vec16<T: Copy, const V: usize>(pub [T; V]);

/// One 16-byte load (`p` 16-byte aligned, `V * size_of::<T>() == 16`).
#[inline(always)]
pub unsafe fn load_vec16<T: Copy, const V: usize>(p: *const T) -> [T; V] {
    const { assert!(V * size_of::<T>() == 16) };
    (*(p as *const Vec16<T, V>)).0
}

/// One 16-byte store (`p` 16-byte aligned, `V * size_of::<T>() == 16`).
#[inline(always)]
pub unsafe fn store_vec16<T: Copy, const V: usize>(p: *mut T, v: [T; V]) {
    const { assert!(V * size_of::<T>() == 16) };
    *(p as *mut Vec16<T, V>) = Vec16(v);
}

/// `V` elements filling 8 aligned bytes, read or written as one 8-byte access.
#[repr(C, align(8))]
#[derive(Clone, Copy)]
pub struct Vec8<T: Copy, const V: usize>(pub [T; V]);

/// One access of `V` elements filling 16 or 8 bytes (`p` aligned to that width), or `V` accesses
/// of one element.
#[inline(always)]
pub unsafe fn load_vec<T: Copy, const V: usize>(p: *const T) -> [T; V] {
    match V * size_of::<T>() {
        16 => (*(p as *const Vec16<T, V>)).0,
        8 => (*(p as *const Vec8<T, V>)).0,
        _ => *(p as *const [T; V]),
    }
}

/// `V` elements filling 4 aligned bytes.
#[repr(C, align(4))]
#[derive(Clone, Copy)]
pub struct Vec4<T: Copy, const V: usize>(pub [T; V]);

/// `V` elements filling 2 aligned bytes.
#[repr(C, align(2))]
#[derive(Clone, Copy)]
pub struct Vec2<T: Copy, const V: usize>(pub [T; V]);

/// One access of `V` narrow elements filling 16, 8, 4 or 2 bytes (`p` aligned to that width):
/// a lane's share of a warp's coalesced read when fewer than 16 bytes make a vector.
#[inline(always)]
pub unsafe fn load_narrow<T: Copy, const V: usize>(p: *const T) -> [T; V] {
    match V * size_of::<T>() {
        16 => (*(p as *const Vec16<T, V>)).0,
        8 => (*(p as *const Vec8<T, V>)).0,
        4 => (*(p as *const Vec4<T, V>)).0,
        2 => (*(p as *const Vec2<T, V>)).0,
        _ => *(p as *const [T; V]),
    }
}

/// Half to single precision, exactly (`cvt.f32.f16`); `bits` holds the binary16 encoding.
#[inline(always)]
pub fn f16_to_f32(bits: u16) -> f32 {
    let r: f32;
    unsafe {
        asm!(
            "{{ .reg .b16 h; mov.b16 h, {x}; cvt.f32.f16 {r}, h; }}",
            r = out(reg32) r,
            x = in(reg16) bits,
            options(pure, nomem, nostack)
        )
    };
    r
}

/// The store of [`load_vec`].
#[inline(always)]
pub unsafe fn store_vec<T: Copy, const V: usize>(p: *mut T, v: [T; V]) {
    match V * size_of::<T>() {
        16 => *(p as *mut Vec16<T, V>) = Vec16(v),
        8 => *(p as *mut Vec8<T, V>) = Vec8(v),
        _ => *(p as *mut [T; V]) = v,
    }
}
