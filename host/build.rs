//! Builds the kernels (gpu/) into PTX with the PTX builder and embeds them, deflated, in the
//! library, so the binaries run on machines without Rust. (The PTX text is about 40 MB and
//! compresses tenfold; every test executable and binary carries it.) Rebuilds only when the
//! kernel sources change. Launch bounds are added when a module is loaded, from the tuning in
//! force.
//!
//! This is the build script of the repository. A packaged crate (`cargo xtask package`) carries
//! the module prebuilt and ships `packaged/build.rs` instead, which needs neither rustup nor a
//! nightly. Both hand the library the deflated module's path in `GPU_SCAN_PTX_DEFLATED`.

use std::path::{Path, PathBuf};

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let root = manifest.parent().expect("host/ lives in the workspace root").to_path_buf();
    for p in ["gpu/src", "gpu/Cargo.toml", "gpu/rust-toolchain.toml", "abi/src", "abi/Cargo.toml"] {
        println!("cargo:rerun-if-changed={}", root.join(p).display());
    }
    println!("cargo:rerun-if-env-changed=GPU_SCAN_ARCH");

    let out_dir = PathBuf::from(std::env::var("OUT_DIR").unwrap());
    let opts = ptx_builder::Options {
        target_dir: target_dir(&out_dir).join("gpu-ptx"),
        ..ptx_builder::Options::for_workspace(&root)
    };
    let built = match ptx_builder::build(&opts) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    };
    let ptx = std::fs::read(&built.ptx).expect("reading the PTX module");
    let out = out_dir.join("kernels.ptx.deflate");
    std::fs::write(&out, miniz_oxide::deflate::compress_to_vec(&ptx, 6)).expect("writing the PTX module into OUT_DIR");
    println!("cargo:rustc-env=GPU_SCAN_PTX_DEFLATED={}", out.display());
}

/// The target directory of the outer build (wherever `CARGO_TARGET_DIR` or the configuration put
/// it): `OUT_DIR` is `<target>[/<triple>]/<profile>/build/<package>-<hash>/out`. The kernel build
/// shares it, across profiles, and never writes into the source tree.
fn target_dir(out_dir: &Path) -> PathBuf {
    out_dir.ancestors().nth(4).expect("OUT_DIR lies four levels inside the target directory").to_path_buf()
}
