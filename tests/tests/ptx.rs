//! The PTX module embedded in the library holds exactly the kernels the host names
//! (`scan_abi::Kernel::all`), and, with ptxas, assembles for sm_90 within the tuning's launch
//! bounds without local memory, except where the tuning accepts some. Both check the module the
//! binaries carry, so they run wherever the test executable does. The packaged crate
//! (`cargo xtask package`) ships the module these tests were built with, byte for byte.

use gpu_scan::ptx::{bounds, embedded, with_bounds, PtxModule};
use scan_abi::bounds::{allowed_spill_bytes, expand};
use scan_abi::tuning::{for_arch, DEFAULT_ARCH};

/// The architecture the module is built for by default.
const DEFAULT_ARCH_NAME: &str = ptx_builder::DEFAULT_ARCH;
use scan_abi::Kernel;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::ExitCode;
use workspace_tests::{needs, test};

fn main() -> ExitCode {
    workspace_tests::main(vec![
        test("ptx_holds_exactly_the_kernels_the_host_names", ptx_holds_exactly_the_named_kernels),
        needs(
            "ptxas_assembles_every_kernel_within_its_bounds_without_unmeasured_local_memory",
            missing_ptxas(),
            ptxas_assembles_every_kernel,
        ),
        needs("the_packaged_crate_ships_the_module_a_fresh_build_gives", missing_package(), packaged_module_is_fresh),
    ])
}

/// Where `GPU_SCAN_PACKAGE` names the packaged library (CI sets it), or else `cargo xtask
/// package` left it, in the target directory of this test executable.
fn package_path() -> PathBuf {
    match std::env::var_os(PACKAGE) {
        Some(p) => PathBuf::from(p),
        None => {
            let exe = std::env::current_exe().expect("the test executable's path");
            // <target>/<profile>/deps/<exe>
            let target = exe.ancestors().nth(3).expect("the test executable lies in a target directory");
            target.join("package").join(format!("gpu-scan-{}.crate", env!("CARGO_PKG_VERSION")))
        }
    }
}

/// Names the packaged library; the test fails rather than being ignored when it is missing.
const PACKAGE: &str = "GPU_SCAN_PACKAGE";

fn missing_package() -> Option<String> {
    let path = package_path();
    (std::env::var_os(PACKAGE).is_none() && !path.is_file())
        .then(|| format!("no packaged crate at {} (run `cargo xtask package`, or set {PACKAGE})", path.display()))
}

fn packaged_module_is_fresh() {
    let path = package_path();
    let file = std::fs::File::open(&path).unwrap_or_else(|e| panic!("{PACKAGE}: {}: {e}", path.display()));
    let mut archive = tar::Archive::new(flate2::read::GzDecoder::new(file));
    let mut shipped = Vec::new();
    for entry in archive.entries().expect("the .crate is a tar archive") {
        let mut entry = entry.expect("a readable archive entry");
        let name = entry.path().expect("an entry path").to_string_lossy().into_owned();
        if name.contains("/kernels/") && name.ends_with(".ptx.deflate") {
            let mut deflated = Vec::new();
            std::io::Read::read_to_end(&mut entry, &mut deflated).expect("reading the shipped module");
            shipped.push((name, deflated));
        }
    }
    assert_eq!(
        shipped.len(),
        1,
        "{} ships one PTX module: {:?}",
        path.display(),
        shipped.iter().map(|s| &s.0).collect::<Vec<_>>()
    );
    let (name, deflated) = &shipped[0];
    let text = miniz_oxide::inflate::decompress_to_vec(deflated).expect("the shipped module inflates");
    let fresh = embedded();
    assert!(name.ends_with(&format!("gpu_scan_kernels.{}.ptx.deflate", DEFAULT_ARCH_NAME)), "{name}");
    assert!(
        text == fresh.as_bytes(),
        "{name} in {} differs from the kernels built from this checkout ({} and {} bytes): run `cargo xtask package` again",
        path.display(),
        text.len(),
        fresh.len()
    );
}

/// Why there is no ptxas, if there is none. `PTXAS`, when set, must name it (the test then fails
/// if it does not).
fn missing_ptxas() -> Option<String> {
    if std::env::var_os("PTXAS").is_some() || ptx_builder::find_ptxas().is_some() {
        return None;
    }
    Some("no ptxas (set PTXAS or put it on PATH; PyPI's nvidia-cuda-nvcc has one)".into())
}

fn ptx_holds_exactly_the_named_kernels() {
    let text = embedded();
    let module = PtxModule::parse(&text);
    let have: BTreeSet<String> = module.kernel_names().map(String::from).collect();
    let named: BTreeSet<String> = Kernel::all().map(|k| k.to_string()).collect();
    let missing: Vec<&String> = named.difference(&have).collect();
    let unnamed: Vec<&String> = have.difference(&named).collect();
    assert!(missing.is_empty(), "kernels the host names but the PTX lacks: {missing:?}");
    assert!(unnamed.is_empty(), "kernels in the PTX that no family names: {unnamed:?}");
    assert!(text.contains(".target sm_90"));
}

fn ptxas_assembles_every_kernel() {
    let ptxas = match std::env::var_os("PTXAS") {
        Some(p) => PathBuf::from(p),
        None => ptx_builder::find_ptxas().expect("checked by missing_ptxas"),
    };
    assert!(ptxas.is_file(), "PTXAS={} is not a file", ptxas.display());
    let tuning = for_arch(DEFAULT_ARCH);
    // The module as the host loads it: with the tuning's launch bounds.
    let dir = tempfile::tempdir().unwrap();
    let bounded = dir.path().join("kernels.bounded.ptx");
    std::fs::write(&bounded, with_bounds(&embedded(), &bounds(tuning))).unwrap();
    let kernels = ptx_builder::ptxas_report(&ptxas, &bounded, "sm_90").expect("ptxas accepts the module");
    assert_eq!(kernels.len(), Kernel::all().count(), "ptxas compiled every kernel");
    let by_name: std::collections::HashMap<String, Kernel> = Kernel::all().map(|k| (k.to_string(), k)).collect();
    // Each bounded kernel, and each left free that must still fit, fits its blocks per SM
    // (registers in units of 8).
    let fits: Vec<(String, u32, u32)> = expand(tuning.launch_bounds, &tuning.shapes)
        .chain(expand(tuning.unbounded_fits, &tuning.shapes))
        .map(|(k, threads, blocks)| (k.to_string(), threads, blocks))
        .collect();
    for k in &kernels {
        if let Some((_, threads, blocks)) = fits.iter().find(|f| f.0 == k.name) {
            assert!(
                k.registers.div_ceil(8) * 8 * threads * blocks <= 65536,
                "{} uses {} registers, too many for {blocks} blocks of {threads} threads",
                k.name,
                k.registers
            );
        }
    }
    let local: Vec<String> = kernels
        .iter()
        .filter(|k| {
            k.stack_bytes.max(k.spill_store_bytes).max(k.spill_load_bytes)
                > allowed_spill_bytes(tuning, by_name[&k.name])
        })
        .map(|k| format!("{} (stack {}, spills {}/{})", k.name, k.stack_bytes, k.spill_store_bytes, k.spill_load_bytes))
        .collect();
    assert!(local.is_empty(), "kernels using more local memory than the tuning's spills allow: {local:?}");
}
