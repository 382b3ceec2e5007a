//! Typed views of the block's dynamic shared memory.

use crate::arch;
use core::marker::PhantomData;

/// A typed window into dynamic shared memory. Kernels carve it from the launch's dynamic shared
/// memory with [`Carver`], whose sizes the host computes from the same `scan-abi` formulas; all
/// indices stay inside the window by construction, which is the invariant `get`/`set` rely on.
#[derive(Clone, Copy)]
pub struct Smem<T> {
    ptr: *mut T,
    _t: PhantomData<T>,
}

impl<T: Copy> Smem<T> {
    #[inline(always)]
    pub fn get(self, i: u32) -> T {
        unsafe { *self.ptr.add(i as usize) }
    }

    #[inline(always)]
    pub fn set(self, i: u32, v: T) {
        unsafe { *self.ptr.add(i as usize) = v }
    }

    /// Address of element `i` (for atomics).
    #[inline(always)]
    pub fn at(self, i: u32) -> *mut T {
        unsafe { self.ptr.add(i as usize) }
    }

    /// The same bytes seen as elements of `U`, for windows that serve one purpose after
    /// another (the caller keeps the two uses apart with a barrier).
    #[inline(always)]
    pub fn cast<U: Copy>(self) -> Smem<U> {
        const { assert!(core::mem::align_of::<U>() <= 16) };
        Smem { ptr: self.ptr as *mut U, _t: PhantomData }
    }

    /// The window starting `elems` elements further on.
    #[inline(always)]
    pub fn offset(self, elems: u32) -> Smem<T> {
        Smem { ptr: unsafe { self.ptr.add(elems as usize) }, _t: PhantomData }
    }
}

/// Hands out consecutive, 16-byte aligned windows of dynamic shared memory, and aborts the
/// kernel if the launch provided fewer bytes than the kernel needs (a host planning bug becomes
/// a launch error instead of silent corruption).
pub struct Carver {
    base: *mut u8,
    used: u32,
}

impl Carver {
    #[inline(always)]
    pub fn new() -> Carver {
        Carver { base: arch::dynamic_smem(), used: 0 }
    }

    /// The next window of `elems` elements of `T`.
    #[inline(always)]
    pub fn take<T: Copy>(&mut self, elems: u32) -> Smem<T> {
        let ptr = unsafe { self.base.add(self.used as usize) } as *mut T;
        self.used += scan_abi::smem::window(elems, core::mem::size_of::<T>() as u32);
        Smem { ptr, _t: PhantomData }
    }

    /// Traps unless the launch gave at least the bytes taken so far.
    #[inline(always)]
    pub fn check(&self) {
        if arch::dynamic_smem_bytes() < self.used {
            arch::trap();
        }
    }
}

impl Default for Carver {
    fn default() -> Self {
        Carver::new()
    }
}
