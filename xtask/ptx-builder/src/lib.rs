//! Builds the `gpu` crate into one PTX module (the role `cuda_builder` plays for Rust-CUDA).
//!
//! rustc's own `nvptx64-nvidia-cuda` backend on the nightly pinned in `gpu/rust-toolchain.toml`
//! compiles the crate with `-Zbuild-std=core` and `--emit=asm`: the emitted `.s` file is one
//! self-contained PTX module (no linker runs; panics become `trap`). The pinned toolchain is
//! installed with rustup when missing, since `RUSTUP_AUTO_INSTALL=0` may be set. The cargo started
//! here gets a clean environment (none of the outer build's `RUSTC`, `RUSTUP_TOOLCHAIN`,
//! `CARGO_ENCODED_RUSTFLAGS`, …) and its own target directory (the outer one is locked).

use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The rustc target of the kernels.
pub const TARGET: &str = "nvptx64-nvidia-cuda";
/// The PTX ISA version the kernels need (16-byte atomic loads and stores: PTX 8.3).
pub const PTX_FEATURE: &str = "+ptx83";
/// The GPU architecture built for unless told otherwise.
pub const DEFAULT_ARCH: &str = "sm_90";

/// What to build.
#[derive(Clone, Debug)]
pub struct Options {
    /// The `gpu/` crate.
    pub gpu_dir: PathBuf,
    /// Cargo target directory for the kernel build.
    pub target_dir: PathBuf,
    /// GPU architecture, e.g. `sm_90`.
    pub arch: String,
}

impl Options {
    /// Defaults for a workspace rooted at `root`: `root/gpu`, `gpu-ptx` in `$CARGO_TARGET_DIR` or
    /// `root/target`, sm_90 (or `$GPU_SCAN_ARCH`).
    pub fn for_workspace(root: &Path) -> Options {
        let target = std::env::var_os("CARGO_TARGET_DIR").map(PathBuf::from).unwrap_or_else(|| root.join("target"));
        Options {
            gpu_dir: root.join("gpu"),
            target_dir: root.join(target).join("gpu-ptx"),
            arch: std::env::var("GPU_SCAN_ARCH").unwrap_or_else(|_| DEFAULT_ARCH.to_string()),
        }
    }
}

/// A finished build.
#[derive(Clone, Debug)]
pub struct Built {
    /// The PTX module.
    pub ptx: PathBuf,
    /// The toolchain that built it.
    pub toolchain: String,
}

/// Why a build failed, with what to do about it.
#[derive(Debug)]
pub enum Error {
    Io(String, std::io::Error),
    NoPin(PathBuf),
    Rustup(String),
    Compile(String),
    BadOutput(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io(what, e) => write!(f, "{what}: {e}"),
            Error::NoPin(p) => write!(f, "no `channel = \"...\"` line in {}", p.display()),
            Error::Rustup(m) => write!(f, "rustup: {m} (is rustup installed and on PATH?)"),
            Error::Compile(m) => write!(f, "building the kernels failed:\n{m}"),
            Error::BadOutput(m) => write!(f, "the kernel build produced unexpected output: {m}"),
        }
    }
}

impl std::error::Error for Error {}

/// The nightly pinned in `gpu_dir/rust-toolchain.toml`.
pub fn pinned_toolchain(gpu_dir: &Path) -> Result<String, Error> {
    let file = gpu_dir.join("rust-toolchain.toml");
    let text = std::fs::read_to_string(&file).map_err(|e| Error::Io(format!("reading {}", file.display()), e))?;
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("channel"))
        .filter_map(|rest| rest.trim().strip_prefix('='))
        .map(|v| v.trim().trim_matches('"').to_string())
        .next()
        .ok_or(Error::NoPin(file))
}

/// Variables of an enclosing cargo/rustup run that would leak into the kernel build.
fn is_inherited_build_var(key: &str) -> bool {
    (key.starts_with("CARGO") && key != "CARGO_HOME")
        || key.starts_with("RUSTC")
        || key.starts_with("RUSTDOC")
        || key.starts_with("__CARGO")
        || matches!(key, "RUSTFLAGS" | "RUSTUP_TOOLCHAIN" | "RUST_TARGET_PATH" | "TARGET" | "HOST" | "OUT_DIR")
        || key.starts_with("DEP_")
        || key.starts_with("PROFILE")
        || key.starts_with("OPT_LEVEL")
        || key.starts_with("DEBUG")
        || key.starts_with("NUM_JOBS")
}

/// `rustup` with a clean environment.
fn rustup() -> Command {
    let mut c = Command::new("rustup");
    for (k, _) in std::env::vars_os() {
        if let Some(k) = k.to_str() {
            if is_inherited_build_var(k) {
                c.env_remove(k);
            }
        }
    }
    c
}

fn run_rustup(args: &[&str]) -> Result<String, Error> {
    let out = rustup()
        .args(args)
        .output()
        .map_err(|e| Error::Rustup(format!("cannot run `rustup {}`: {e}", args.join(" "))))?;
    if !out.status.success() {
        return Err(Error::Rustup(format!(
            "`rustup {}` failed: {}",
            args.join(" "),
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Installs `toolchain` with `rust-src` and `llvm-tools` unless already there.
pub fn ensure_toolchain(toolchain: &str) -> Result<(), Error> {
    let installed = run_rustup(&["toolchain", "list"])?;
    if !installed.lines().any(|l| l.starts_with(toolchain)) {
        eprintln!("ptx-builder: installing the kernel toolchain {toolchain} (once)");
        run_rustup(&[
            "toolchain",
            "install",
            toolchain,
            "--profile",
            "minimal",
            "--component",
            "rust-src",
            "--component",
            "llvm-tools",
        ])?;
    }
    let components = run_rustup(&["component", "list", "--installed", "--toolchain", toolchain])?;
    if !components.lines().any(|l| l.starts_with("rust-src")) {
        run_rustup(&["component", "add", "rust-src", "--toolchain", toolchain])?;
    }
    Ok(())
}

/// Builds the PTX module. Cargo's own fingerprints make this a no-op when nothing changed.
pub fn build(opts: &Options) -> Result<Built, Error> {
    let toolchain = pinned_toolchain(&opts.gpu_dir)?;
    ensure_toolchain(&toolchain)?;
    std::fs::create_dir_all(&opts.target_dir)
        .map_err(|e| Error::Io(format!("creating {}", opts.target_dir.display()), e))?;
    let ptx = opts.target_dir.join(format!("gpu_scan_kernels.{}.{}.ptx", opts.arch, checkout_tag(&opts.gpu_dir)));

    let compile = |clean_first: bool| -> Result<(), Error> {
        if clean_first {
            let _ = cargo(opts, &toolchain)
                .args(["clean", "--release", "--target", TARGET, "-p", "gpu-scan-kernels"])
                .output();
        }
        let mut c = cargo(opts, &toolchain);
        c.args(["rustc", "--release", "--target", TARGET, "-Zbuild-std=core", "--lib", "--"])
            .arg(format!("--emit=asm={}", ptx.display()));
        let out = c.output().map_err(|e| Error::Rustup(format!("cannot run cargo through rustup: {e}")))?;
        if !out.status.success() {
            return Err(Error::Compile(String::from_utf8_lossy(&out.stderr).into_owned()));
        }
        Ok(())
    };
    compile(false)?;
    if !ptx.exists() {
        // Cargo thought the crate fresh but the module was removed: rebuild it.
        compile(true)?;
    }
    let text = std::fs::read_to_string(&ptx).map_err(|e| Error::Io(format!("reading {}", ptx.display()), e))?;
    let target_line = format!(".target {}", opts.arch);
    if !text.lines().any(|l| l.trim() == target_line) {
        return Err(Error::BadOutput(format!("{} has no `{target_line}` line", ptx.display())));
    }
    Ok(Built { ptx, toolchain })
}

/// A short name for the `gpu/` crate at `gpu_dir`, in the module's file name. Checkouts that share
/// a target directory are each their own package to cargo, which re-emits a module only when its
/// own package changed: with one file name for all, a build whose package was fresh would hand
/// on the module another checkout had written last.
fn checkout_tag(gpu_dir: &Path) -> String {
    let path = gpu_dir.canonicalize().unwrap_or_else(|_| gpu_dir.to_path_buf());
    // FNV-1a: stable across toolchains, unlike the standard library's hasher.
    let hash = path
        .as_os_str()
        .as_encoded_bytes()
        .iter()
        .fold(0xcbf2_9ce4_8422_2325u64, |h, &b| (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3));
    format!("{:08x}", hash as u32)
}

/// `rustup run <toolchain> cargo` in `gpu/`, with the kernel flags and nothing inherited.
///
/// The raised unroll threshold makes LLVM fully unroll the per-vector loops of the larger tiles;
/// left partly rolled, their register arrays would be indexed at run time and moved to local
/// memory (ptxas then reports a stack frame, and the kernel runs several times slower).
fn cargo(opts: &Options, toolchain: &str) -> Command {
    let mut c = rustup();
    c.args(["run", toolchain, "cargo"]).current_dir(&opts.gpu_dir).env("CARGO_TARGET_DIR", &opts.target_dir).env(
        "RUSTFLAGS",
        format!("-Zunstable-options -Cpanic=immediate-abort -Ctarget-cpu={} -Ctarget-feature={PTX_FEATURE} -Cllvm-args=-unroll-threshold=1500", opts.arch),
    );
    c
}

/// Registers and local memory of one kernel, as ptxas reports them.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct KernelResources {
    pub name: String,
    pub registers: u32,
    pub stack_bytes: u32,
    pub spill_store_bytes: u32,
    pub spill_load_bytes: u32,
}

/// `ptxas`: `$PTXAS`, else the first `ptxas` on PATH.
pub fn find_ptxas() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("PTXAS") {
        let p = PathBuf::from(p);
        return p.is_file().then_some(p);
    }
    std::env::split_paths(&std::env::var_os("PATH")?).map(|d| d.join("ptxas")).find(|p| p.is_file())
}

/// Assembles `ptx` for `arch` with `ptxas -v` and returns every kernel's resources.
pub fn ptxas_report(ptxas: &Path, ptx: &Path, arch: &str) -> Result<Vec<KernelResources>, Error> {
    let out = Command::new(ptxas)
        .args([&format!("-arch={arch}"), "-v", "-o", "/dev/null"])
        .arg(ptx)
        .output()
        .map_err(|e| Error::Io(format!("running {}", ptxas.display()), e))?;
    let log = String::from_utf8_lossy(&out.stderr).into_owned();
    if !out.status.success() {
        return Err(Error::BadOutput(format!("ptxas rejected {}:\n{log}", ptx.display())));
    }
    Ok(parse_ptxas_log(&log))
}

/// Parses the `-v` log of ptxas.
///
/// The properties of a function a kernel calls (a `.func` LLVM did not inline) follow the
/// kernel's own, so a frame line counts only for the function its "Function properties for"
/// line names; a kernel's stack is the larger of its own frame and the cumulative stack size
/// (which includes its callees').
pub fn parse_ptxas_log(log: &str) -> Vec<KernelResources> {
    let mut kernels: Vec<KernelResources> = Vec::new();
    let mut properties_of = String::new();
    let number_before = |line: &str, unit: &str| -> Option<u32> {
        let i = line.find(unit)?;
        line[..i].trim_end().rsplit(|c: char| !c.is_ascii_digit()).next()?.parse().ok()
    };
    for line in log.lines() {
        if let Some(rest) = line.split("Compiling entry function '").nth(1) {
            let name = rest.split('\'').next().unwrap_or_default().to_string();
            kernels.push(KernelResources { name, ..Default::default() });
        } else if let Some(rest) = line.split("Function properties for ").nth(1) {
            properties_of = rest.trim().to_string();
        } else if let Some(k) = kernels.last_mut() {
            if line.contains("bytes stack frame") && properties_of == k.name {
                k.stack_bytes = k.stack_bytes.max(number_before(line, "bytes stack frame").unwrap_or(0));
                k.spill_store_bytes = number_before(line, "bytes spill stores").unwrap_or(0);
                k.spill_load_bytes = number_before(line, "bytes spill loads").unwrap_or(0);
            } else if line.contains("Used") && line.contains("registers") {
                k.registers = number_before(line, "registers").unwrap_or(0);
                k.stack_bytes = k.stack_bytes.max(number_before(line, "bytes cumulative stack size").unwrap_or(0));
            }
        }
    }
    kernels
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_ptxas_verbose_output() {
        let log = "ptxas info    : Compiling entry function 'single_pass_u32_add' for 'sm_90'\n\
                   ptxas info    : Function properties for single_pass_u32_add\n    \
                   16 bytes stack frame, 8 bytes spill stores, 4 bytes spill loads\n\
                   ptxas info    : Used 48 registers, used 1 barriers\n";
        let k = parse_ptxas_log(log);
        assert_eq!(
            k,
            vec![KernelResources {
                name: "single_pass_u32_add".into(),
                registers: 48,
                stack_bytes: 16,
                spill_store_bytes: 8,
                spill_load_bytes: 4
            }]
        );
    }

    #[test]
    fn a_callees_properties_do_not_overwrite_its_kernels() {
        // As ptxas 13 prints it: the kernel's own properties, then those of a function it calls.
        let log = "ptxas info    : Compiling entry function 'single_pass_u8_add' for 'sm_90'\n\
                   ptxas info    : Function properties for single_pass_u8_add\n    \
                   248 bytes stack frame, 4 bytes spill stores, 4 bytes spill loads\n\
                   ptxas info    : Used 64 registers, used 1 barriers, 248 bytes cumulative stack size\n\
                   ptxas info    : Compile time = 171.267 ms\n\
                   ptxas info    : Function properties for _RNCINvNtNtCs7zF_closure\n    \
                   0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n\
                   ptxas info    : Compiling entry function 'calls_a_framed_function' for 'sm_90'\n\
                   ptxas info    : Function properties for calls_a_framed_function\n    \
                   0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n\
                   ptxas info    : Used 40 registers, used 0 barriers, 32 bytes cumulative stack size\n";
        let k = parse_ptxas_log(log);
        assert_eq!(k.len(), 2);
        assert_eq!((k[0].stack_bytes, k[0].spill_store_bytes, k[0].registers), (248, 4, 64));
        assert_eq!((k[1].stack_bytes, k[1].registers), (32, 40), "a callee's frame counts through the cumulative size");
    }

    #[test]
    fn reads_the_pin() {
        let dir = std::env::temp_dir().join(format!("ptx-builder-pin-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("rust-toolchain.toml"), "[toolchain]\nchannel = \"nightly-2026-05-20\"\n").unwrap();
        assert_eq!(pinned_toolchain(&dir).unwrap(), "nightly-2026-05-20");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn outer_build_variables_are_not_inherited() {
        for k in
            ["RUSTC", "RUSTC_WRAPPER", "RUSTUP_TOOLCHAIN", "CARGO_ENCODED_RUSTFLAGS", "CARGO_TARGET_DIR", "RUSTFLAGS"]
        {
            assert!(is_inherited_build_var(k), "{k}");
        }
        for k in ["CARGO_HOME", "PATH", "HOME", "RUSTUP_HOME"] {
            assert!(!is_inherited_build_var(k), "{k}");
        }
    }

    #[test]
    fn each_checkout_has_a_module_file_of_its_own() {
        let (a, b) = (checkout_tag(Path::new("/work/a/gpu")), checkout_tag(Path::new("/work/b/gpu")));
        assert_ne!(a, b);
        assert_eq!(a, checkout_tag(Path::new("/work/a/gpu")));
        assert_eq!(a.len(), 8);
    }
}
