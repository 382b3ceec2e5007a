//! The build script of the packaged crate (`cargo xtask package` ships this file as its
//! `build.rs`). The PTX module comes prebuilt and deflated in `kernels/`, so a dependent crate
//! builds on stable alone: no rustup, no nightly, no CUDA toolkit, no network, and nothing is
//! written anywhere. The library embeds the file named in `GPU_SCAN_PTX_DEFLATED`.

use std::path::PathBuf;

/// The architecture the kernels are built for unless `GPU_SCAN_ARCH` asks for another.
const DEFAULT_ARCH: &str = "sm_90";

fn main() {
    println!("cargo:rerun-if-env-changed=GPU_SCAN_ARCH");
    let arch = std::env::var("GPU_SCAN_ARCH").unwrap_or_else(|_| DEFAULT_ARCH.to_string());
    let kernels = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap()).join("kernels");
    let module = kernels.join(format!("gpu_scan_kernels.{arch}.ptx.deflate"));
    if !module.is_file() {
        let shipped: Vec<String> = std::fs::read_dir(&kernels)
            .into_iter()
            .flatten()
            .flatten()
            .filter_map(|e| {
                e.file_name()
                    .to_str()?
                    .strip_prefix("gpu_scan_kernels.")?
                    .strip_suffix(".ptx.deflate")
                    .map(String::from)
            })
            .collect();
        eprintln!(
            "error: this gpu-scan package carries kernels for {} only, not {arch}; build gpu-scan from its repository \
             with GPU_SCAN_ARCH={arch} to compile them",
            if shipped.is_empty() { "no architecture".to_string() } else { shipped.join(", ") }
        );
        std::process::exit(1);
    }
    println!("cargo:rerun-if-changed={}", module.display());
    println!("cargo:rustc-env=GPU_SCAN_PTX_DEFLATED={}", module.display());
}
