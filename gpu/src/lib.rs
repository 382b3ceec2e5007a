//! The scan kernels, compiled by rustc's own nvptx64 backend into one PTX module.
//!
//! Layers, bottom up: [`arch`] (the only module touching the target), [`op`] (operators),
//! [`vector`] (one thread's 16-byte vector, packed for narrow types), [`warp`] (warp-level scans
//! and reductions), [`block`] (block-level scans, one file per algorithm), [`tile`] (moving a
//! tile between global memory and registers), [`lookback`] (the single-pass tile-status
//! machinery), and [`kernels`] (the entry points, stamped out for every element type and
//! operator).
#![no_std]
#![feature(
    abi_ptx,
    stdarch_nvptx,
    link_llvm_intrinsics,
    asm_experimental_arch,
    core_intrinsics,
    gpu_intrinsics,
    gpu_launch_sized_workgroup_mem
)]
#![allow(internal_features, clippy::missing_safety_doc)]

pub mod arch;
pub mod block;
pub mod kernels;
pub mod lookback;
pub mod op;
pub mod probe;
pub mod smem;
pub mod tile;
pub mod vector;
pub mod warp;

/// A panic in a kernel (with `-Cpanic=immediate-abort` none should reach here) aborts it.
#[panic_handler]
fn panic(_: &core::panic::PanicInfo) -> ! {
    arch::trap()
}
