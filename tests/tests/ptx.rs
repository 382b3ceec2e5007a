//! The kernels build into one PTX module that holds exactly the kernels the host names
//! (`scan_abi::Kernel::all`), and, with ptxas, assemble for sm_90 within the tuning's launch
//! bounds without local memory, except where the tuning accepts some.

use gpu_scan::runtime::ptx::{bounds, with_bounds, PtxModule};
use scan_abi::bounds::{allowed_spill_bytes, expand};
use scan_abi::tuning::{for_arch, DEFAULT_ARCH};
use scan_abi::Kernel;
use std::collections::BTreeSet;
use std::path::PathBuf;
use std::process::ExitCode;
use workspace_tests::needs;

fn main() -> ExitCode {
    workspace_tests::main(vec![
        needs("ptx_holds_exactly_the_kernels_the_host_names", missing_rustup(), ptx_holds_exactly_the_named_kernels),
        needs(
            "ptxas_assembles_every_kernel_within_its_bounds_without_unmeasured_local_memory",
            missing_rustup().or_else(missing_ptxas),
            ptxas_assembles_every_kernel,
        ),
    ])
}

/// Why the PTX cannot be built here, if it cannot (GPU machines only run prebuilt binaries).
fn missing_rustup() -> Option<String> {
    let ok = std::process::Command::new("rustup").arg("--version").output().is_ok_and(|o| o.status.success());
    (!ok).then(|| "no rustup here to build the PTX".to_string())
}

/// Why there is no ptxas, if there is none. `PTXAS`, when set, must name it (the test then fails
/// if it does not).
fn missing_ptxas() -> Option<String> {
    if std::env::var_os("PTXAS").is_some() || ptx_builder::find_ptxas().is_some() {
        return None;
    }
    Some("no ptxas (set PTXAS or put it on PATH; PyPI's nvidia-cuda-nvcc has one)".into())
}

fn built() -> PathBuf {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).parent().unwrap().to_path_buf();
    let opts =
        ptx_builder::Options { arch: ptx_builder::DEFAULT_ARCH.into(), ..ptx_builder::Options::for_workspace(&root) };
    ptx_builder::build(&opts).expect("the PTX build").ptx
}

fn ptx_holds_exactly_the_named_kernels() {
    let text = std::fs::read_to_string(built()).unwrap();
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
    let ptx = built();
    let bounded = ptx.with_extension("bounded.ptx");
    std::fs::write(&bounded, with_bounds(&std::fs::read_to_string(&ptx).unwrap(), &bounds(tuning))).unwrap();
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
