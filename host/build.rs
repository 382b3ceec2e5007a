//! Builds the kernels (gpu/) into PTX with the PTX builder and embeds them, deflated, in the
//! library, so the binaries run on machines without Rust. (The PTX text is about 32 MB and
//! compresses tenfold; every test executable and binary carries it.) Rebuilds only when the
//! kernel sources change. Launch bounds are added when a module is loaded, from the tuning in
//! force.

use std::path::PathBuf;

fn main() {
    let manifest = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let root = manifest.parent().expect("host/ lives in the workspace root").to_path_buf();
    for p in ["gpu/src", "gpu/Cargo.toml", "gpu/rust-toolchain.toml", "abi/src", "abi/Cargo.toml"] {
        println!("cargo:rerun-if-changed={}", root.join(p).display());
    }
    println!("cargo:rerun-if-env-changed=GPU_SCAN_ARCH");

    let opts = ptx_builder::Options::for_workspace(&root);
    let built = match ptx_builder::build(&opts) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("error: {e}");
            std::process::exit(1);
        }
    };
    let ptx = std::fs::read(&built.ptx).expect("reading the PTX module");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("kernels.ptx.deflate");
    std::fs::write(&out, miniz_oxide::deflate::compress_to_vec(&ptx, 6)).expect("writing the PTX module into OUT_DIR");
}
